module.exports = {
  ...require('../../jest.preset.cjs'),
  roots: ['<rootDir>/src'],
  // Integration specs (*.int.spec.ts) use a database made for this run, dropped afterwards.
  globalSetup: '<rootDir>/test/global-setup.cjs',
  globalTeardown: '<rootDir>/test/global-teardown.cjs',
  setupFilesAfterEnv: ['<rootDir>/src/test-support/close-open-systems.ts'],
  // Tests and hooks: generous for a busy machine, bounded so a hang fails the test instead.
  testTimeout: 60_000,
};
