import { closeOpenSystems } from './open-systems';

// Jest runs this file before each test file (setupFilesAfterEnv): the file-level hook below runs
// after the file's own afterAll hooks, so a system whose start threw half-way or whose file
// forgot (or failed) to close it is still torn down before the next file starts.
afterAll(() => closeOpenSystems(), 60_000);
