import { PrismaService } from './common/prisma.service';
import { BOOTSTRAP_ADMIN_KEY, makeTenant, startSystem, within, type TestSystem } from './test-support/system';

/**
 * The reads the console and the clients poll have database connections of their own
 * (GANTRY_DB_READ_POOL_SIZE, common/prisma.service.ts): while submissions hold every write
 * connection, the Overview and a job list still answer, and the submission waiting for a
 * connection is taken as soon as one is free.
 */
describe('reads keep their own database connections (real Postgres)', () => {
  let sys: TestSystem;
  let t: Awaited<ReturnType<typeof makeTenant>>;
  const admin = `Bearer ${BOOTSTRAP_ADMIN_KEY}`;

  beforeAll(async () => {
    sys = await startSystem({ GANTRY_DB_POOL_SIZE: '2', GANTRY_DB_READ_POOL_SIZE: '1', GANTRY_DB_TX_MAX_WAIT_MS: '60000' });
    t = await makeTenant(sys.db, 'read-pool', { quota: { guaranteed: 8, limit: 8 } });
    // the member's key and team are looked up once, before the write connections are taken
    expect((await sys.http().get('/v1/jobs').set('Authorization', t.auth)).status).toBe(200);
  });
  afterAll(async () => {
    await sys?.close();
  });

  it('the Overview and a job list answer while every write connection is held; a submission waits, then lands', async () => {
    const prisma = sys.api.get(PrismaService, { strict: false });
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let holding = 0;
    // two transactions outside any request: the API's two write connections, held until released
    const holders = [0, 1].map(() =>
      prisma.sql.transaction(async (tx) => {
        await tx.query('SELECT 1');
        holding++;
        await released;
      }),
    );
    try {
      await within(
        'taking both write connections',
        waitFor(() => holding === 2),
        10_000,
      );
      let submitted = false;
      const submission = sys
        .http()
        .post('/v1/jobs')
        .set('Authorization', t.auth)
        .send({ teamId: t.team.id, name: 'waits-for-a-connection', kind: 'training', resources: { gpus: 1 }, simulation: { durationSeconds: 1 } })
        .then((r) => {
          submitted = true;
          return r;
        });

      // the console's Overview: capacity, jobs per state and the head of the queue
      const [utilization, summary] = await within(
        'the Overview with every write connection held',
        Promise.all([sys.http().get('/v1/utilization').set('Authorization', admin), sys.http().get('/v1/jobs/summary').set('Authorization', admin)]),
        20_000,
      );
      expect(utilization.status).toBe(200);
      expect(summary.status).toBe(200);
      const list = await within(
        'a job list with every write connection held',
        Promise.resolve(sys.http().get('/v1/jobs').set('Authorization', t.auth)),
        20_000,
      );
      expect(list.status).toBe(200);
      // the writes' connections are still held: the submission has not been answered
      expect(holding).toBe(2);
      expect(submitted).toBe(false);

      release();
      await Promise.all(holders);
      const answer = await within('the submission once a write connection is free', Promise.resolve(submission), 20_000);
      expect(answer.status).toBe(201);
      const job = await sys.db.job.findUnique({ where: { id: (answer.body as { id: string }).id } });
      expect(job?.name).toBe('waits-for-a-connection');
    } finally {
      release();
      await Promise.allSettled(holders);
    }
  });
});

async function waitFor(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 20));
}
