import { startSystem, type TestSystem } from '../../test-support/system';
import { ReplicaReadiness } from './replica-readiness.service';

/**
 * Readiness pushed (real Redis): the worker's announcement that a replica serves wakes the API's
 * activator at once, not at its next fallback poll; other endpoints' announcements do not.
 */
describe('replica readiness announcements (worker -> API over Redis pub/sub)', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startSystem();
  }, 60_000);
  afterAll(async () => sys?.close());

  it('wakes a waiting activator on the announcement for its endpoint, long before its fallback poll', async () => {
    const api = sys.api.get(ReplicaReadiness);
    const worker = sys.worker.get(ReplicaReadiness);
    await api.ensureSubscribed();
    const t0 = Date.now();
    const mine = api.next('endpoint-a', 20_000);
    const other = api.next('endpoint-b', 1_000);
    await worker.announce('endpoint-a');
    expect(await mine).toBe(true);
    expect(Date.now() - t0).toBeLessThan(5_000);
    // another endpoint's waiter was not woken: it ends at its own timeout
    expect(await other).toBe(false);
  });

  it('resolves false after the fallback interval when nothing is announced', async () => {
    const api = sys.api.get(ReplicaReadiness);
    const t0 = Date.now();
    expect(await api.next('endpoint-quiet', 300)).toBe(false);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
  });
});
