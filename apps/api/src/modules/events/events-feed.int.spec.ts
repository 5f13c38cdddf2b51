import { createTeam, createTenant } from '@gantry/db';
import type { PrismaService } from '../../common/prisma.service';
import { startDatabase } from '../../test-support/system';
import { EventsFeedRepository, type FeedEvent } from './events-feed.repository';

/** The live feed's source: the event log in (createdAt, id) order, page by page, each event with its team. */
describe('EventsFeedRepository.since (real Postgres)', () => {
  let handle: Awaited<ReturnType<typeof startDatabase>>;
  let feed: EventsFeedRepository;
  const t0 = new Date('2026-12-04T09:00:00.000Z');
  const at = (ms: number) => new Date(t0.getTime() + ms);

  beforeAll(async () => {
    handle = await startDatabase();
    feed = new EventsFeedRepository({ client: handle.db, sql: handle.sql } as unknown as PrismaService);
    const tenant = await createTenant(handle.db, { name: 'feed', slug: 'feed' });
    const team = await createTeam(handle.db, tenant.id, { name: 'feed team', slug: 'team', quota: { guaranteed: 8, limit: 8 } });
    const job = await handle.db.job.create({
      data: { id: 'feed-job', tenantId: tenant.id, teamId: team.id, name: 'j', kind: 'batch', replicas: 1, resources: { gpus: 1 } },
    });
    // seven events in one millisecond (a burst), two later, one earlier; one of a job, one cluster-wide
    const rows = [
      ...Array.from({ length: 7 }, (_, i) => ({ id: `e-burst-${i}`, createdAt: at(10) })),
      { id: 'e-later-a', createdAt: at(11) },
      { id: 'e-later-b', createdAt: at(500) },
      { id: 'e-before', createdAt: at(-1) },
    ];
    await handle.db.event.createMany({
      data: rows.map((r, i) => ({ ...r, type: 'job.submitted', message: `m${i}`, tenantId: i === 8 ? null : tenant.id, jobId: i === 0 ? job.id : null })),
    });
  });
  afterAll(async () => handle?.close());

  it('pages through a burst inside one millisecond without skipping or repeating an event, in (createdAt, id) order', async () => {
    const seen: FeedEvent[] = [];
    let after: { createdAt: Date; id?: string } = { createdAt: t0 };
    for (let page = 0; page < 10; page++) {
      const rows = await feed.since(after, 3);
      seen.push(...rows);
      if (rows.length < 3) break;
      after = { createdAt: rows.at(-1)!.createdAt, id: rows.at(-1)!.id };
    }
    expect(seen.map((e) => e.id)).toEqual([...Array.from({ length: 7 }, (_, i) => `e-burst-${i}`), 'e-later-a', 'e-later-b']);
    expect(seen.every((e) => e.createdAt instanceof Date)).toBe(true);
    expect(seen[0]!.createdAt.toISOString()).toBe(at(10).toISOString());
  });

  it("carries the job's team for a job's event, and nothing for a cluster-wide one", async () => {
    const rows = await feed.since({ createdAt: at(-5) }, 100);
    const byId = new Map(rows.map((e) => [e.id, e]));
    const team = await handle.db.team.findFirstOrThrow({ where: { slug: 'team' } });
    expect(byId.get('e-burst-0')).toMatchObject({ jobId: 'feed-job', job: { teamId: team.id }, bareMetalLease: null });
    expect(byId.get('e-burst-1')).toMatchObject({ jobId: null, job: null, bareMetalLease: null });
    expect(byId.get('e-later-b')).toMatchObject({ tenantId: null });
    expect(rows[0]!.id).toBe('e-before');
  });
});
