import { createDatabase, type SqlTx } from '@gantry/db';
import { eventually, startDatabase } from './test-support/system';

/** The server process behind the connection `q` runs its statement on. */
async function backendPid(q: Pick<SqlTx, 'query'>): Promise<number> {
  return (await q.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0]!.pid;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A pooled connection that Postgres closes while it is idle (a restart, an administrator's
 * pg_terminate_backend, an idle timeout) is dropped from its pool, and the next statement opens
 * a new one: the process goes on. The reads' pool of the API (PrismaService.reads) may serve
 * typed SQL only, before Prisma has ever connected through it.
 */
describe('a pool whose idle connection Postgres closes (real Postgres)', () => {
  let handle: Awaited<ReturnType<typeof startDatabase>>;
  beforeAll(async () => {
    handle = await startDatabase();
  });
  afterAll(async () => {
    await handle?.close();
  });

  it('drops the closed connection and answers the next statement on a new one', async () => {
    const { client, sql } = createDatabase(handle.url, { max: 2 });
    try {
      const pid = await backendPid(sql);
      const [{ closed }] = await handle.sql.query<{ closed: boolean }>('SELECT pg_terminate_backend($1) AS closed', [pid]);
      expect(closed).toBe(true);
      // the idle connection learns of it from its socket, outside any statement
      await pause(500);
      expect(await backendPid(sql)).not.toBe(pid);
    } finally {
      await client.$disconnect();
    }
  });

  it('fails a transaction whose connection is closed between two statements, and goes on with a new connection', async () => {
    const { client, sql } = createDatabase(handle.url, { max: 1 });
    try {
      let pid = 0;
      const failed = await sql
        .transaction(async (tx) => {
          pid = await backendPid(tx);
          await handle.sql.query('SELECT pg_terminate_backend($1)', [pid]);
          await pause(500);
          await tx.query('SELECT 1');
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(failed).toBeInstanceOf(Error);
      // the pool's only connection was dropped, not returned: the next statement has a new one
      expect(await backendPid(sql)).not.toBe(pid);
    } finally {
      await client.$disconnect();
    }
  });

  it('closes the connections of a pool that served typed SQL alone when its client disconnects', async () => {
    const { client, sql } = createDatabase(handle.url, { max: 2 });
    const pid = await backendPid(sql);
    await client.$disconnect();
    // gone at once, not when the pool's idle timeout (10 s) would have closed it
    await eventually(
      async () => (await handle.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1', [pid]))[0]!.n === 0,
      2000,
      50,
    );
  });
});
