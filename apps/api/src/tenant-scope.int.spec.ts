import type { JobCreateParsed, EndpointCreateParsed } from '@gantry/contracts';
import { createTeam, createTenant, type PrismaClient, type Sql } from '@gantry/db';
import type { PrismaService } from './common/prisma.service';
import { SYSTEM_SCOPE, type TenantScope } from './common/tenant-scope';
import { ApiKeysRepository } from './modules/api-keys/api-keys.repository';
import { AuditRepository } from './modules/audit/audit.repository';
import { EndpointsRepository } from './modules/endpoints/endpoints.repository';
import { EventsRepository } from './modules/events/events.repository';
import { JobLogsRepository } from './modules/job-logs/job-logs.repository';
import { JobsRepository } from './modules/jobs/jobs.repository';
import { QuotasRepository } from './modules/quotas/quotas.repository';
import { SchedulesRepository } from './modules/schedules/schedules.repository';
import { BareMetalLeasesRepository } from './modules/bare-metal/bare-metal-leases.repository';
import { TimelineRepository } from './modules/events/timeline.repository';
import { ReservationsRepository } from './modules/reservations/reservations.repository';
import { PlannerRepository } from './modules/planner/planner.repository';
import { TenantsRepository } from './modules/tenants/tenants.repository';
import { UsersRepository } from './modules/users/users.repository';
import { UtilizationRepository } from './modules/utilization/utilization.repository';
import { FairShareRepository } from './modules/fair-share/fair-share.repository';
import { repositoryMethods } from './test-support/repository-methods';
import { startDatabase } from './test-support/system';

/**
 * Every scoped repository method, tried as an outsider on tenant A's rows: as tenant B, and as a
 * caller bound to A's other team. Reads find nothing of A's, writes change nothing of A's and
 * creates outside the scope are refused. The list of cases must name every scoped method
 * (repositoryMethods), so a new method cannot skip this.
 */

let handle: Awaited<ReturnType<typeof startDatabase>>;
let db: PrismaClient;
let repos: ReturnType<typeof makeRepos>;

function makeRepos(client: PrismaClient, sql: Sql) {
  const prisma = { client, sql, reads: { client, sql } } as unknown as PrismaService;
  return {
    jobs: new JobsRepository(prisma, new EventsRepository()),
    endpoints: new EndpointsRepository(prisma),
    quotas: new QuotasRepository(prisma),
    tenants: new TenantsRepository(prisma),
    users: new UsersRepository(prisma),
    schedules: new SchedulesRepository(prisma),
    bareMetal: new BareMetalLeasesRepository(prisma, new EventsRepository()),
    timeline: new TimelineRepository(prisma),
    reservations: new ReservationsRepository(prisma),
    planner: new PlannerRepository(prisma),
    audit: new AuditRepository(prisma),
    keys: new ApiKeysRepository(prisma),
    utilization: new UtilizationRepository(prisma),
    fairShare: new FairShareRepository(prisma),
    jobLogs: new JobLogsRepository(prisma),
  };
}

/** Tenant A (teams A1 and A2) holds one of everything in A1; tenant B has its own team. */
const A = {
  tenantId: '',
  team1: '',
  team2: '',
  job: '',
  suspendedJob: '',
  endpoint: '',
  schedule: '',
  bareMetalLease: '',
  reservation: '',
  plannerRun: '',
  key: '',
  user: '',
  gpu: '',
  node: '',
};
let asB: TenantScope;
let asA2: TenantScope;
let asA1: TenantScope & { kind: 'tenant' };
const now = new Date();
const hourAgo = new Date(now.getTime() - 3_600_000);
const page = { limit: 100 };

const jobBody = (teamId: string): JobCreateParsed =>
  ({
    teamId,
    name: 'a1-job',
    kind: 'training',
    priority: 'normal',
    replicas: 1,
    resources: { gpus: 1, gpuModel: 'H100-80GB', cpuMilli: 4000, memoryMiB: 16384 },
    topology: { level: 'any', required: false },
    preemptible: false,
  }) as JobCreateParsed;

const endpointBody = (teamId: string): EndpointCreateParsed =>
  ({
    teamId,
    name: 'a1-endpoint',
    model: 'llama',
    resources: { gpus: 1, gpuModel: 'H100-80GB', cpuMilli: 4000, memoryMiB: 16384 },
    minReplicas: 0,
    maxReplicas: 2,
    targetConcurrency: 10,
    scaleToZeroAfterSeconds: 60,
    warmPool: 0,
  }) as EndpointCreateParsed;

beforeAll(async () => {
  handle = await startDatabase();
  db = handle.db;
  repos = makeRepos(db, handle.sql);
  const tA = await createTenant(db, { name: 'A', slug: 'scope-a' });
  const a1 = await createTeam(db, tA.id, { name: 'A1', slug: 'a1', quota: { guaranteed: 4, limit: 8 } });
  const a2 = await createTeam(db, tA.id, { name: 'A2', slug: 'a2', quota: { guaranteed: 2, limit: 2 } });
  const tB = await createTenant(db, { name: 'B', slug: 'scope-b' });
  const b1 = await createTeam(db, tB.id, { name: 'B1', slug: 'b1', quota: { guaranteed: 1, limit: 1 } });
  Object.assign(A, { tenantId: tA.id, team1: a1.id, team2: a2.id });
  asA1 = { kind: 'tenant', tenantId: tA.id, teamId: a1.id };
  asA2 = { kind: 'tenant', tenantId: tA.id, teamId: a2.id };
  asB = { kind: 'tenant', tenantId: tB.id, teamId: null };
  void b1;

  A.job = (await repos.jobs.create(asA1, jobBody(a1.id), { keyId: 'k', idempotencyKey: 'idem-a1' })).id;
  await repos.jobLogs.append({ id: A.job, tenantId: tA.id, teamId: a1.id, since: null, stored: null }, [
    { at: Date.now(), replica: 0, seq: 1, stream: 'stdout', text: 'step 1 | loss 9.1' },
  ]);
  const held = await repos.jobs.create(asA1, { ...jobBody(a1.id), name: 'a1-held' }, { keyId: 'k' });
  await repos.jobs.suspend(asA1, held.id);
  A.suspendedJob = held.id;
  A.endpoint = (await repos.endpoints.create(asA1, endpointBody(a1.id))).id;
  A.schedule = (await repos.schedules.create(asA1, { teamId: a1.id, jobId: null, action: 'suspend', cron: '0 18 * * *', timeZone: 'UTC' })).id;
  A.bareMetalLease = (
    await repos.bareMetal.create(asA1, { teamId: a1.id, name: 'a1-metal', gpuModel: 'A100-80GB', count: 1, image: 'img', sameLeaf: false })
  ).id;
  const hold = {
    teamId: a1.id,
    name: 'a1 hold',
    gpuModel: 'H100-80GB',
    gpus: 1,
    nodes: null,
    startsAt: new Date('2030-01-07T08:00:00Z'),
    endsAt: new Date('2030-01-07T10:00:00Z'),
    cron: null,
    timeZone: null,
    durationMinutes: null,
  };
  const made = await repos.reservations.create(asA1, tA.id, hold, () => null);
  A.reservation = 'row' in made ? made.row.id : '';
  A.plannerRun = (await repos.planner.create(asA1, { createdByKeyId: 'seed', spec: {}, policies: ['gantry'] })).id;
  const key = await repos.keys.createWithin(
    asA1,
    { name: 'a1 key', role: 'member', scopes: ['jobs:read'], tenantId: tA.id, teamId: a1.id, userId: null, owner: 'key:seed', expiresAt: null },
    20,
    now,
  );
  A.key = key!.row.id;
  A.user = (await repos.users.create(asA1, { email: 'ada@a.test', name: 'Ada', passwordHash: 'x', role: 'member', tenantId: tA.id, teamId: a1.id })).id;
  await repos.audit.append({
    tenantId: tA.id,
    teamId: a1.id,
    actor: 'ada',
    apiKeyId: null,
    userId: null,
    source: null,
    action: 'job.create',
    target: A.job,
    data: {},
  });

  // A running allocation of A1 on a GPU that has been idle for an hour, a replica and a cold start.
  const spine = await db.spine.create({ data: { name: 'spine-scope' } });
  const leaf = await db.leaf.create({ data: { name: 'leaf-scope', spineId: spine.id } });
  const node = await db.node.create({ data: { name: 'node-scope', leafId: leaf.id, cpuMilli: 64_000, memoryMiB: 512_000 } });
  const gpu = await db.gpu.create({ data: { nodeId: node.id, index: 0, model: 'H100-80GB', memoryMiB: 81_920 } });
  A.gpu = gpu.id;
  A.node = node.id;
  await db.event.create({
    data: {
      tenantId: tA.id,
      bareMetalLeaseId: A.bareMetalLease,
      nodeId: node.id,
      type: 'node.bare-metal.provisioning',
      message: 'node-scope held by a1-metal',
    },
  });
  await db.allocation.create({
    data: { tenantId: tA.id, teamId: a1.id, jobId: A.job, replica: 0, nodeId: node.id, gpuId: gpu.id, gpuModel: 'H100-80GB', gpuUnits: 1, startedAt: hourAgo },
  });
  // ...and the GPU that replica held in an earlier run, released an hour ago (where the job last ran)
  await db.allocation.create({
    data: {
      tenantId: tA.id,
      teamId: a1.id,
      jobId: A.job,
      replica: 0,
      nodeId: node.id,
      gpuId: gpu.id,
      gpuModel: 'H100-80GB',
      gpuUnits: 1,
      startedAt: new Date(hourAgo.getTime() - 3600_000),
      endedAt: hourAgo,
      activeSlot: null,
    },
  });
  await db.gpuTelemetry.create({ data: { gpuId: gpu.id, nodeId: node.id, at: now, smPct: 0, memoryUsedMiB: 0, powerW: 70, idleSince: hourAgo } });
  await db.endpointReplica.create({ data: { tenantId: tA.id, endpointId: A.endpoint, replica: 0, state: 'ready', serving: true } });
  await repos.endpoints.recordColdStart(asA1, A.endpoint, { startedAt: hourAgo, readyAt: now, warm: false });
  await db.usageRollup.create({
    data: { stepSeconds: 60, bucket: hourAgo, nodeId: '', gpuModel: 'H100-80GB', tenantId: tA.id, teamId: a1.id, allocatedSeconds: 60 },
  });
}, 60_000);

afterAll(() => handle?.close());

/** A1's rows as the platform sees them, to check that an outsider's write changed nothing. */
const job = (id: string) => db.job.findUniqueOrThrow({ where: { id } });
const endpoint = () => db.endpoint.findUniqueOrThrow({ where: { id: A.endpoint } });

/**
 * A create outside the scope: refused by the repository (a team-bound caller naming another team),
 * or by the database when the team named is not of the scope's tenant (the team_in_tenant keys).
 */
const REFUSED = /outside the caller|team_in_tenant_fkey/;

type Case = (outsider: TenantScope, who: 'B' | 'A2') => Promise<void>;

/** Tenant-level data: a caller bound to A's other team still sees its own tenant. */
const TENANT_LEVEL = new Set([
  'QuotasRepository.findTenant',
  'QuotasRepository.guaranteedSum',
  'TenantsRepository.findTenant',
  'TenantsRepository.listTenants',
  'QuotasRepository.setTenantTotal',
  'TenantsRepository.createTeam',
  'JobsRepository.pendingQueue',
  'JobsRepository.queueHead',
  'JobsRepository.pendingByTeamAndPriority',
  'FairShareRepository.teams',
  // planner runs are the tenant's (a tenant admin's), not a team's
  'PlannerRepository.create',
  'PlannerRepository.find',
  'PlannerRepository.list',
  'PlannerRepository.requestCancel',
]);

const cases: Record<string, Case> = {
  'JobsRepository.create': async (o) => {
    await expect(repos.jobs.create(o as typeof asA1, jobBody(A.team1), { keyId: 'k' })).rejects.toThrow(REFUSED);
  },
  'JobsRepository.findByIdempotencyKey': async (o) => expect(await repos.jobs.findByIdempotencyKey(o as typeof asA1, 'idem-a1')).toBeNull(),
  'JobsRepository.list': async (o) => expect((await repos.jobs.list(o, page, {})).map((j) => j.id)).not.toContain(A.job),
  'JobsRepository.find': async (o) => expect(await repos.jobs.find(o, A.job)).toBeNull(),
  'JobLogsRepository.read': async (o) => expect((await repos.jobLogs.read(o, A.job, { tail: 10 })).lines).toEqual([]),
  'JobsRepository.listEvents': async (o) => expect(await repos.jobs.listEvents(o, A.job)).toEqual([]),
  'JobsRepository.lastRuns': async (o) => expect((await repos.jobs.lastRuns(o, [A.job])).size).toBe(0),
  'JobsRepository.queueHead': async (o) => expect((await repos.jobs.queueHead(o, 100)).map((j) => j.id)).not.toContain(A.job),
  'JobsRepository.pendingByTeamAndPriority': async (o) => expect((await repos.jobs.pendingByTeamAndPriority(o)).map((r) => r.teamId)).not.toContain(A.team1),
  'JobsRepository.stateCounts': async (o) => expect((await repos.jobs.stateCounts(o, A.team1)).size).toBe(0),
  'JobsRepository.stillPending': async (o) => expect(await repos.jobs.stillPending(o, [A.job])).toEqual([]),
  'JobsRepository.pendingQueue': async (o) => expect((await repos.jobs.pendingQueue(o)).map((j) => j.teamId)).not.toContain(A.team1),
  'FairShareRepository.teams': async (o) => {
    const seen = await repos.fairShare.teams(o, now.getTime(), hourAgo.getTime());
    expect(seen.teams.map((t) => t.id)).not.toContain(A.team1);
    expect(seen.holdings.map((h) => h.teamId)).not.toContain(A.team1);
  },
  'JobsRepository.suspend': async (o) => {
    expect((await repos.jobs.suspend(o, A.job)).changed).toBe(false);
    expect((await job(A.job)).state).toBe('pending');
  },
  'JobsRepository.resume': async (o) => {
    expect((await repos.jobs.resume(o, A.suspendedJob)).changed).toBe(false);
    expect((await job(A.suspendedJob)).state).toBe('suspended');
  },
  'JobsRepository.suspendableIdsOfTeam': async (o) => expect(await repos.jobs.suspendableIdsOfTeam(o, A.team1)).toEqual([]),
  'JobsRepository.suspendedIdsOfTeam': async (o) => expect(await repos.jobs.suspendedIdsOfTeam(o, A.team1)).toEqual([]),
  'JobsRepository.cancel': async (o) => {
    expect((await repos.jobs.cancel(o, A.job, now)).cancelled).toBe(false);
    expect((await job(A.job)).state).toBe('pending');
    expect(await db.allocation.count({ where: { jobId: A.job, endedAt: null } })).toBe(1);
  },

  'EndpointsRepository.create': async (o) => {
    await expect(repos.endpoints.create(o as typeof asA1, endpointBody(A.team1))).rejects.toThrow(REFUSED);
  },
  'EndpointsRepository.list': async (o) => expect((await repos.endpoints.list(o, page, {})).map((e) => e.id)).not.toContain(A.endpoint),
  'EndpointsRepository.find': async (o) => expect(await repos.endpoints.find(o, A.endpoint)).toBeNull(),
  'EndpointsRepository.findForInvoke': async (o) => expect(await repos.endpoints.findForInvoke(o, A.endpoint)).toBeNull(),
  'EndpointsRepository.update': async (o) => {
    expect(await repos.endpoints.update(o, A.endpoint, { maxReplicas: 9 })).toBe(false);
    expect((await endpoint()).maxReplicas).toBe(2);
  },
  'EndpointsRepository.scale': async (o) => {
    expect(await repos.endpoints.scale(o, A.endpoint, 2, now)).toBe(false);
    expect((await endpoint()).manualReplicas).toBeNull();
  },
  'EndpointsRepository.softDelete': async (o) => {
    expect(await repos.endpoints.softDelete(o, A.endpoint, now)).toBe(false);
    expect((await endpoint()).deletedAt).toBeNull();
  },
  'EndpointsRepository.touch': async (o) => {
    await repos.endpoints.touch(o, A.endpoint, now);
    expect((await endpoint()).lastRequestAt).toBeNull();
  },
  'EndpointsRepository.activate': async (o) => {
    await db.endpointReplica.updateMany({ where: { endpointId: A.endpoint }, data: { serving: false } });
    try {
      expect(await repos.endpoints.activate(o, A.endpoint, now)).toBe(false);
      expect((await endpoint()).desiredReplicas).toBe(0);
      expect(await db.endpointReplica.count({ where: { endpointId: A.endpoint, serving: true } })).toBe(0);
    } finally {
      await db.endpointReplica.updateMany({ where: { endpointId: A.endpoint }, data: { serving: true } });
    }
  },
  'EndpointsRepository.servingReplica': async (o) => expect(await repos.endpoints.servingReplica(o, A.endpoint)).toBeNull(),
  'EndpointsRepository.recordColdStart': async (o) => {
    expect(await repos.endpoints.recordColdStart(o as typeof asA1, A.endpoint, { startedAt: hourAgo, readyAt: now, warm: true })).toBe(false);
    expect(await db.coldStart.count({ where: { endpointId: A.endpoint } })).toBe(1);
  },
  'EndpointsRepository.coldStartDurations': async (o) => expect((await repos.endpoints.coldStartDurations(o, [A.endpoint])).size).toBe(0),

  'QuotasRepository.findTeam': async (o) => expect(await repos.quotas.findTeam(o, A.team1)).toBeNull(),
  'QuotasRepository.findTenant': async (o) => expect(await repos.quotas.findTenant(o, A.tenantId)).toBeNull(),
  'QuotasRepository.replaceTeamQuotas': async (o) => {
    const r = await repos.quotas.replaceTeamQuotas(
      o,
      A.team1,
      [{ gpuModel: '*', guaranteed: 0, limit: 0, budgetPolicy: 'warn' }] as never,
      { setCeilings: true },
      () => {},
    );
    expect(r).toBeNull();
    expect(Number((await db.quota.findFirstOrThrow({ where: { teamId: A.team1 } })).limit)).toBe(8);
  },
  'QuotasRepository.setTenantTotal': async (o) => {
    const before = (await db.tenant.findUniqueOrThrow({ where: { id: A.tenantId } })).gpuTotal;
    expect(await repos.quotas.setTenantTotal(o, A.tenantId, 1234, () => {})).toBeNull();
    expect((await db.tenant.findUniqueOrThrow({ where: { id: A.tenantId } })).gpuTotal).toEqual(before);
  },
  'QuotasRepository.bounds': async (o) => {
    const b = await repos.quotas.bounds(o, A.team1, 'H100-80GB');
    expect(b.rows).toEqual([]);
    expect(b.tenantTotal).toBeNull();
  },
  'QuotasRepository.guaranteedSum': async (o) => expect(await repos.quotas.guaranteedSum(o, A.tenantId)).toBe(0),
  'QuotasRepository.inUseByModel': async (o) => expect((await repos.quotas.inUseByModel(o, A.team1)).size).toBe(0),
  'QuotasRepository.pendingJobs': async (o) => expect(await repos.quotas.pendingJobs(o, A.team1)).toEqual([]),
  'QuotasRepository.gpuHours': async (o) => expect(await repos.quotas.gpuHours(o, A.team1, hourAgo, now, now)).toBe(0),

  'TenantsRepository.createTenant': async (o) => {
    await expect(repos.tenants.createTenant(o, { name: 'C', slug: 'scope-c' } as never)).rejects.toThrow(/outside/);
  },
  'TenantsRepository.listTenants': async (o) => expect((await repos.tenants.listTenants(o, page)).map((t) => t.id)).not.toContain(A.tenantId),
  'TenantsRepository.findTenant': async (o) => expect(await repos.tenants.findTenant(o, A.tenantId)).toBeNull(),
  'TenantsRepository.createTeam': async (o) => {
    await expect(repos.tenants.createTeam(o, A.tenantId, { name: 'Intruders', slug: 'intruders' } as never)).rejects.toThrow(/outside/);
  },
  'TenantsRepository.listTeams': async (o) => expect((await repos.tenants.listTeams(o, A.tenantId, page)).map((t) => t.id)).not.toContain(A.team1),
  'TenantsRepository.findTeam': async (o) => expect(await repos.tenants.findTeam(o, A.team1)).toBeNull(),
  'TenantsRepository.teamsOf': async (o) => expect((await repos.tenants.teamsOf(o)).map((t) => t.id)).not.toContain(A.team1),

  'UsersRepository.create': async (o) => {
    await expect(
      repos.users.create(o, { email: 'eve@a.test', name: 'Eve', passwordHash: 'x', role: 'member', tenantId: A.tenantId, teamId: A.team1 }),
    ).rejects.toThrow(/outside/);
  },
  'UsersRepository.list': async (o) => expect((await repos.users.list(o, page)).map((u) => u.id)).not.toContain(A.user),

  'SchedulesRepository.create': async (o) => {
    await expect(
      repos.schedules.create(o as typeof asA1, { teamId: A.team1, jobId: null, action: 'suspend', cron: '0 1 * * *', timeZone: 'UTC' }),
    ).rejects.toThrow(REFUSED);
  },
  'SchedulesRepository.listOfTeam': async (o) => expect(await repos.schedules.listOfTeam(o, A.team1)).toEqual([]),
  'SchedulesRepository.remove': async (o) => {
    expect(await repos.schedules.remove(o, A.schedule)).toBe(false);
    expect(await db.suspendSchedule.count({ where: { id: A.schedule } })).toBe(1);
  },

  'BareMetalLeasesRepository.create': async (o) => {
    await expect(
      repos.bareMetal.create(o as typeof asA1, { teamId: A.team1, name: 'intruder', gpuModel: 'A100-80GB', count: 1, image: 'img', sameLeaf: false }),
    ).rejects.toThrow(REFUSED);
  },
  'BareMetalLeasesRepository.list': async (o) => expect((await repos.bareMetal.list(o, {})).map((l) => l.id)).not.toContain(A.bareMetalLease),
  'BareMetalLeasesRepository.find': async (o) => expect(await repos.bareMetal.find(o, A.bareMetalLease)).toBeNull(),
  'BareMetalLeasesRepository.request': async (o) => {
    expect(await repos.bareMetal.request(o, A.bareMetalLease, { from: ['pending'], to: 'releasing', reason: 'x', nodeTo: 'deprovisioning' })).toBe(false);
    expect((await db.bareMetalLease.findUniqueOrThrow({ where: { id: A.bareMetalLease } })).state).toBe('pending');
  },
  'TimelineRepository.nodeEvents': async (o) =>
    expect((await repos.timeline.nodeEvents(o, A.node)).map((e) => e.message)).not.toContain('node-scope held by a1-metal'),
  'ReservationsRepository.create': async (o) => {
    const hold = { ...(await db.reservation.findUniqueOrThrow({ where: { id: A.reservation } })) };
    const data = { ...hold, id: undefined, tenantId: undefined, createdAt: undefined };
    await expect(repos.reservations.create(o, A.tenantId, data as never, () => null)).rejects.toThrow(REFUSED);
  },
  'ReservationsRepository.update': async (o) => {
    const row = await db.reservation.findUniqueOrThrow({ where: { id: A.reservation } });
    const data = { ...row, name: 'taken over', id: undefined, tenantId: undefined, createdAt: undefined };
    expect(await repos.reservations.update(o, A.reservation, data as never, () => null)).toBeNull();
    expect((await db.reservation.findUniqueOrThrow({ where: { id: A.reservation } })).name).toBe('a1 hold');
  },
  'ReservationsRepository.list': async (o) =>
    expect(await repos.reservations.list(o, { from: new Date('2030-01-01T00:00:00Z'), to: new Date('2030-02-01T00:00:00Z') })).toEqual([]),
  'ReservationsRepository.find': async (o) => expect(await repos.reservations.find(o, A.reservation)).toBeNull(),
  'ReservationsRepository.remove': async (o) => {
    expect(await repos.reservations.remove(o, A.reservation)).toBe(false);
    expect(await db.reservation.count({ where: { id: A.reservation } })).toBe(1);
  },

  'PlannerRepository.create': async (o) => {
    // a run is always the caller's own tenant's: never A's
    const run = await repos.planner.create(o, { createdByKeyId: 'x', spec: {}, policies: ['gantry'] });
    expect(run.tenantId).not.toBe(A.tenantId);
  },
  'PlannerRepository.find': async (o) => expect(await repos.planner.find(o, A.plannerRun)).toBeNull(),
  'PlannerRepository.history': async (o) => expect((await repos.planner.history(o, hourAgo)).map((j) => j.id)).not.toContain(A.job),
  'PlannerRepository.list': async (o) => expect((await repos.planner.list(o)).map((r) => r.id)).not.toContain(A.plannerRun),
  'PlannerRepository.requestCancel': async (o) => {
    expect(await repos.planner.requestCancel(o, A.plannerRun)).toBe(false);
    expect((await db.plannerRun.findUnique({ where: { id: A.plannerRun } }))!.cancelRequested).toBe(false);
  },

  'AuditRepository.list': async (o) => expect((await repos.audit.list(o, page, {})).filter((r) => r.tenantId === A.tenantId)).toEqual([]),
  'AuditRepository.targetNames': async (o) => expect([...(await repos.audit.targetNames(o, [A.job, A.endpoint, A.team1])).keys()]).toEqual([]),

  'ApiKeysRepository.createWithin': async (o) => {
    const data = { name: 'x', role: 'member' as const, scopes: [], tenantId: A.tenantId, teamId: A.team1, userId: null, owner: 'key:x', expiresAt: null };
    await expect(repos.keys.createWithin(o, data, 20, now)).rejects.toThrow(/outside/);
  },
  'ApiKeysRepository.list': async (o) => expect((await repos.keys.list(o, page)).map((k) => k.id)).not.toContain(A.key),
  'ApiKeysRepository.find': async (o) => expect(await repos.keys.find(o, A.key)).toBeNull(),
  'ApiKeysRepository.revoke': async (o) => {
    expect(await repos.keys.revoke(o, A.key, now)).toBe(false);
    expect((await db.apiKey.findUniqueOrThrow({ where: { id: A.key } })).revokedAt).toBeNull();
  },

  'UtilizationRepository.usage': async (o) => {
    const rows = await repos.utilization.usage(o, { groupBy: 'team', from: new Date(hourAgo.getTime() - 60_000), to: now, rollupSeconds: 60, stepSeconds: 60 });
    expect(JSON.stringify(rows)).not.toContain(A.team1);
  },
  'UtilizationRepository.labels': async (o) => {
    expect((await repos.utilization.labels(o, 'team', [A.team1])).size).toBe(0);
    expect((await repos.utilization.labels(o, 'tenant', [A.tenantId])).size).toBe(o === asA2 ? 1 : 0);
  },
  'UtilizationRepository.teamsNow': async (o) => expect([...(await repos.utilization.teamsNow(o)).keys()]).not.toContain(A.team1),
  'UtilizationRepository.idleAllocations': async (o) => expect(await repos.utilization.idleAllocations(o, now, 10)).toEqual([]),
};

describe('tenant scope, tenant A against outsiders', () => {
  it('names every scoped repository method', () => {
    const scoped = repositoryMethods()
      .filter((m) => m.scoped)
      .map((m) => m.name);
    expect(Object.keys(cases).sort()).toEqual(scoped.sort());
  });

  it('A1 itself (and the platform) sees what the outsiders cannot', async () => {
    for (const scope of [asA1, SYSTEM_SCOPE]) {
      expect(await repos.jobs.find(scope, A.job)).not.toBeNull();
      expect((await repos.jobs.lastRuns(scope, [A.job])).get(A.job)?.map((a) => a.node.name)).toEqual(['node-scope']);
      expect(await repos.endpoints.find(scope, A.endpoint)).not.toBeNull();
      expect((await repos.timeline.nodeEvents(scope, A.node)).map((e) => e.message)).toContain('node-scope held by a1-metal');
      expect(await repos.quotas.findTeam(scope, A.team1)).not.toBeNull();
      expect((await repos.quotas.bounds(scope, A.team1, 'H100-80GB')).rows).toHaveLength(1);
      expect((await repos.quotas.inUseByModel(scope, A.team1)).get('H100-80GB')).toBe(1);
      expect(await repos.schedules.listOfTeam(scope, A.team1)).toHaveLength(1);
      expect(await repos.keys.find(scope, A.key)).not.toBeNull();
      expect(await repos.endpoints.servingReplica(scope, A.endpoint)).not.toBeNull();
      expect(await repos.utilization.idleAllocations(scope, now, 10)).toHaveLength(1);
      expect(await repos.quotas.gpuHours(scope, A.team1, hourAgo, now, now)).toBeGreaterThan(0.9);
      const fair = await repos.fairShare.teams(scope, now.getTime(), hourAgo.getTime());
      expect(fair.teams.find((t) => t.id === A.team1)?.held.gpus).toBe(1);
      expect(fair.holdings.some((h) => h.teamId === A.team1)).toBe(true);
    }
  });

  it.each(Object.keys(cases))('%s: tenant B reaches nothing of A', async (name) => {
    await cases[name]!(asB, 'B');
  });

  it.each(Object.keys(cases).filter((n) => !TENANT_LEVEL.has(n)))('%s: a caller bound to team A2 reaches nothing of team A1', async (name) => {
    await cases[name]!(asA2, 'A2');
  });

  it('the database refuses a team-owned row whose team is in another tenant', async () => {
    const other = await createTenant(db, { name: 'D', slug: 'scope-d' });
    await expect(
      db.job.create({
        data: { tenantId: other.id, teamId: A.team1, name: 'cross', kind: 'training', replicas: 1, resources: {}, reasons: [] },
      }),
    ).rejects.toThrow(/team_in_tenant|foreign key/i);
  });
});
