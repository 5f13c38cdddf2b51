import type { ClusterDriver } from '@gantry/driver';
import { JobLogCollector, JOBS_PER_TICK } from './job-log-collector.service';
import type { CollectableJob, JobLogsRepository } from './job-logs.repository';

/** A repository over `ids` (the collectable jobs), answering as the SQL does: id order, after a cursor, limited. */
function fakeRepo(ids: string[]) {
  const asked: string[][] = [];
  const repo = {
    collectable: async (_now: Date, _recent: number, limit: number, after = ''): Promise<CollectableJob[]> =>
      [...ids]
        .sort()
        .filter((id) => id > after)
        .slice(0, limit)
        .map((id) => ({ id, tenantId: 't', teamId: 'm', since: null, stored: null })),
    appendMany: async (batch: readonly { job: CollectableJob }[]) => {
      asked.push(batch.map((b) => b.job.id));
      return 0;
    },
  };
  return { repo: repo as unknown as JobLogsRepository, asked };
}

const driver = {
  logs: async () => ({ lines: [], unavailable: [] }),
} as unknown as ClusterDriver;

const ids = (n: number) => Array.from({ length: n }, (_, i) => `job-${String(i).padStart(5, '0')}`);

describe('JobLogCollector: which jobs a tick reads', () => {
  it('with more collectable jobs than a tick reads, every job is read within a few ticks, none twice in a tick', async () => {
    const all = ids(JOBS_PER_TICK * 2 + 50);
    const { repo, asked } = fakeRepo(all);
    const collector = new JobLogCollector(driver, repo);
    for (let i = 0; i < 3; i++) await collector.tick();
    for (const tick of asked) {
      expect(tick).toHaveLength(JOBS_PER_TICK);
      expect(new Set(tick).size).toBe(tick.length);
    }
    expect(new Set(asked.flat())).toEqual(new Set(all));
    // the third tick read the last 50 and went on from the start
    expect(asked[2]!.slice(0, 50)).toEqual(all.slice(-50));
    expect(asked[2]!.slice(50)).toEqual(all.slice(0, JOBS_PER_TICK - 50));
  });

  it('with fewer jobs than a tick reads, every tick reads them all', async () => {
    for (const n of [JOBS_PER_TICK, JOBS_PER_TICK - 1, 3]) {
      const { repo, asked } = fakeRepo(ids(n));
      const collector = new JobLogCollector(driver, repo);
      for (let i = 0; i < 3; i++) await collector.tick();
      for (const tick of asked) expect(tick).toEqual(ids(n));
    }
  });
});
