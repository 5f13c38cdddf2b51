import { startSystem, type TestSystem } from '../system';

// Run only by test-guards.int.spec.ts: a suite whose test, own teardown and handles all hang.
describe('a suite made to hang', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startSystem();
  }, 60_000); // starting may be slow on a busy machine; only the test below is meant to hang
  // Its own teardown never finishes and never closes the system.
  afterAll(() => new Promise<void>(() => undefined));

  it('leaves a timer running', () => {
    setInterval(() => undefined, 1000);
    expect(sys.config.queuePrefix).toContain('-s');
  });

  it('never finishes', () => new Promise<void>(() => undefined));
});
