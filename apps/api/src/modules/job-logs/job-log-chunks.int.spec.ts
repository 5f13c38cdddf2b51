import { createTeam, createTenant } from '@gantry/db';
import type { PrismaService } from '../../common/prisma.service';
import type { TenantScope } from '../../common/tenant-scope';
import { startDatabase } from '../../test-support/system';
import { JobLogsRepository, type CollectableJob } from './job-logs.repository';

/** Job logs stored as chunks: each line once across overlapping rounds, read back newest-first across replicas and chunks. */
describe('JobLogsRepository chunks (real Postgres)', () => {
  let handle: Awaited<ReturnType<typeof startDatabase>>;
  let repo: JobLogsRepository;
  let scope: TenantScope;
  let otherTeam: TenantScope;
  const t0 = Date.parse('2026-12-04T09:00:00.000Z');
  const line = (replica: number, seq: number, atMs = seq * 100) => ({
    at: t0 + atMs,
    replica,
    seq,
    stream: 'stdout' as const,
    text: `r${replica} line ${seq}`,
  });
  let job: () => Promise<CollectableJob>;
  let owner: { tenantId: string; teamId: string };

  beforeAll(async () => {
    handle = await startDatabase();
    repo = new JobLogsRepository({ client: handle.db, sql: handle.sql } as unknown as PrismaService);
    const tenant = await createTenant(handle.db, { name: 'logs', slug: 'logs' });
    const team = await createTeam(handle.db, tenant.id, { name: 'logs team', slug: 'team', quota: { guaranteed: 8, limit: 8 } });
    const team2 = await createTeam(handle.db, tenant.id, { name: 'other team', slug: 'other', quota: { guaranteed: 8, limit: 8 } });
    await handle.db.job.create({
      data: { id: 'log-job', tenantId: tenant.id, teamId: team.id, name: 'j', kind: 'training', replicas: 2, resources: { gpus: 1 }, state: 'running' },
    });
    owner = { tenantId: tenant.id, teamId: team.id };
    scope = { kind: 'tenant', ...owner };
    otherTeam = { kind: 'tenant', tenantId: tenant.id, teamId: team2.id };
    // the job as the collector sees it now: what is stored decides what a round keeps
    job = async () => {
      const [j] = (await repo.collectable(new Date(t0 + 3_600_000), 60, 10)).filter((x) => x.id === 'log-job');
      return j!;
    };
  });
  afterAll(async () => handle?.close());

  it('stores each line once when rounds overlap, and knows where each replica stands', async () => {
    expect(await repo.append(await job(), [line(0, 1), line(0, 2), line(1, 1)])).toBe(3);
    // the next round re-reads from the newest stored line (the driver's since is inclusive) and brings new ones
    expect(await repo.append(await job(), [line(0, 2), line(0, 3), line(0, 4), line(1, 1), line(1, 2)])).toBe(3);
    // a round that brings nothing new stores nothing
    expect(await repo.append(await job(), [line(0, 4), line(1, 2)])).toBe(0);
    const j = await job();
    expect(j.stored).toEqual({ '0': 4, '1': 2 });
    expect(j.since!.getTime()).toBe(t0 + 400);
    const all = await repo.read(scope, 'log-job', { tail: 100 });
    expect(all.truncated).toBe(false);
    expect(all.lines.map((l) => `${l.replica}:${l.seq}`)).toEqual(['0:1', '1:1', '0:2', '1:2', '0:3', '0:4']);
  });

  it('reads the newest lines across chunks and replicas, with since, Gantry notes and lines stored before chunks', async () => {
    // many rounds: replica 1 writes slower, so its chunks span longer times
    for (let round = 0; round < 10; round++) {
      const seqs = [5 + round * 3, 6 + round * 3, 7 + round * 3];
      await repo.append(await job(), [...seqs.map((s) => line(0, s)), line(1, 3 + round, (7 + round * 3) * 100 - 50)]);
    }
    // a line stored one row each (before chunks), and a note about replica 1
    await handle.db.jobLogLine.create({
      data: {
        jobId: 'log-job',
        ...owner,
        replica: 2,
        seq: 1n,
        at: new Date(t0 + 3440),
        text: 'legacy',
      },
    });
    await repo.append(await job(), [{ at: t0 + 3450, replica: 1, seq: -1, stream: 'gantry', text: 'replica 1: log unavailable' }]);

    const everything = (await repo.read(scope, 'log-job', { tail: 1000 })).lines;
    const sorted = [...everything].sort((a, b) => a.at.getTime() - b.at.getTime() || a.replica - b.replica || Number(a.seq - b.seq));
    expect(everything).toEqual(sorted);
    expect(everything).toHaveLength(6 + 40 + 2);

    const tail = await repo.read(scope, 'log-job', { tail: 5 });
    expect(tail.truncated).toBe(true);
    expect(tail.lines).toEqual(everything.slice(-5));
    expect(tail.lines.map((l) => l.text)).toContain('replica 1: log unavailable');

    const since = new Date(t0 + 2000);
    const after = await repo.read(scope, 'log-job', { tail: 1000, since });
    expect(after.lines).toEqual(everything.filter((l) => l.at >= since));
    expect(after.truncated).toBe(false);

    // another team of the same tenant reads nothing of it
    expect((await repo.read(otherTeam, 'log-job', { tail: 1000 })).lines).toEqual([]);
  });
});
