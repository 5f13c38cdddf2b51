import { BOOTSTRAP_ADMIN_KEY, startSystem } from '../system';

// Run only by test-guards.int.spec.ts, beside hangs.fixture.ts: it must pass whatever that did.
describe('a suite beside one that hangs', () => {
  it('starts its own system, uses it and closes it', async () => {
    const sys = await startSystem();
    const res = await sys.http().get('/v1/me').set('Authorization', `Bearer ${BOOTSTRAP_ADMIN_KEY}`);
    expect(res.status).toBe(200);
    await sys.close();
  }, 60_000); // its own timeout: the run's 4 s is for the suite made to hang
});
