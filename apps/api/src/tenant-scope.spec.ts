import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repositoryMethods } from './test-support/repository-methods';
import { covers, scopeValues, scopeWhere, SYSTEM_SCOPE, type TenantScope } from './common/tenant-scope';

/**
 * Tenant scope is structural (docs/ARCHITECTURE.md, "Tenant scope"): every public method of a
 * repository takes a TenantScope first, unless the repository (or the method) is listed here as
 * system access with the reason why no caller's scope applies. A new method fails this spec until
 * it is scoped or classified, and every scoped method is tried as another tenant in
 * tenant-scope.int.spec.ts.
 */
const SYSTEM_ACCESS: Record<string, string> = {
  SchedulingRepository: 'the worker places every tenant’s jobs in one cycle',
  LifecycleRepository: 'the worker moves every tenant’s jobs through starting, running, exit and suspend',
  EndpointReplicasRepository: 'the worker’s autoscaler starts and stops every tenant’s replicas',
  TelemetryRepository: 'the worker samples every GPU, whoever holds it',
  DemoHistoryRepository: 'the demo’s replayed past spans the demo tenants; each row carries its own team’s tenant',
  NodesRepository: 'cluster hardware (nodes and GPUs) belongs to no tenant',
  NodeJobsRepository: 'failover and drain requeue every tenant’s jobs on a node',
  MigChangesRepository: 'MIG re-partitioning acts on hardware',
  IncidentsRepository: 'incidents are the operator’s; incident.presenter masks other tenants’ jobs',
  HeartbeatsRepository: 'cluster hardware',
  PowerRepository: 'power management switches hardware (nodes) on and off; it reads only whether a node holds work',
  BareMetalNodesRepository: 'the worker’s provisioner takes nodes for every tenant’s bare-metal leases; nodes are hardware',
  DemandRepository: 'the node manager reads the whole queue to switch personas ahead of demand',
  ClusterRepository: 'cluster hardware; cluster.presenter masks the jobs of other tenants on a GPU',
  EventsFeedRepository: 'the live stream’s source; events-stream filters each subscriber by its scope (visibleTo)',
  EventsRepository: 'appends an event inside the caller’s own, already scoped, transaction',
  IntegrityRepository: 'the invariant checker reads everything, for the platform admin',
  HealthRepository: 'a database ping',
  MetricsRepository: 'Prometheus metrics, served only to the metrics token or the platform admin',
  IdempotencyRepository: 'keys are already namespaced by their owner and team',
  SessionsRepository: 'sign-in: runs before a tenant is known',
  'ApiKeysRepository.findByHash': 'authentication: runs before a tenant is known',
  'ApiKeysRepository.validity': 'authentication: re-checks the key the caller presented',
  'ApiKeysRepository.touch': 'authentication: last-used time of the caller’s own key',
  'AuditRepository.append': 'the audit interceptor writes the caller’s own tenant from its principal',
  'AuditRepository.flush': 'writes the batch of entries queued by append (each with the tenant of its own principal)',
  AuditSubjectsRepository:
    'reads the subject of a change around its handler (which checks the caller’s scope); kept only in the entry of a change that succeeded',
  'AuditRepository.beforeApplicationShutdown': 'flushes the queued entries before the process stops',
  'SchedulesRepository.all': 'the worker’s schedule tick reads every schedule',
  'SchedulesRepository.claim': 'the worker’s schedule tick claims one fire',
  'ReservationsRepository.spanning': 'the scheduling cycle and the worker’s tick read every reservation’s windows (capacity is shared)',
  'ReservationsRepository.jobOwners': 'the scheduling cycle reads the team of every job on the GPUs a reservation holds',
  'PlannerRepository.byId': 'the worker replays the planner run its queue job names',
  'PlannerRepository.claim': 'the worker claims the planner run its queue job names',
  'PlannerRepository.progress': 'the worker writes the progress of the planner run it replays',
  'PlannerRepository.inventory': 'cluster hardware: the live inventory an `inventory` planner cluster replays on',
  'PlannerRepository.finish': 'the worker (or a cancel already checked through the caller’s scope) ends a planner run',
  'FairShareRepository.roll': 'the scheduling cycle rolls every team’s decayed usage forward',
  'JobLogsRepository.collectable': 'the worker’s log tick reads the logs of every tenant’s running jobs',
  'JobLogsRepository.append': 'the worker stores a job’s lines under the tenant and team of the job it read them for',
  'JobLogsRepository.appendMany': 'the worker stores each job’s lines under the tenant and team of the job it read them for',
  'UtilizationRepository.nodeCapacity': 'hardware only: GPU count and model per node, no tenant or team',
  'UtilizationRepository.savedWattSeconds': 'hardware only: what powered-off nodes saved, no tenant or team (platform view)',
  'UtilizationRepository.heatmap': 'hardware only: GPU samples and held units, no tenant or team',
};

const methods = repositoryMethods();
const repoOf = (name: string) => name.slice(0, name.indexOf('.'));
const systemReason = (name: string) => SYSTEM_ACCESS[name] ?? SYSTEM_ACCESS[repoOf(name)];

describe('tenant scope is structural', () => {
  it('every repository method takes a TenantScope first, or is system access with a reason', () => {
    const unclassified = methods.filter((m) => !m.scoped && !systemReason(m.name)).map((m) => `${m.name} (${m.file})`);
    expect(unclassified).toEqual([]);
  });

  it('a scoped repository is not also listed as system access (the list names only what exists)', () => {
    const names = new Set(methods.map((m) => m.name));
    const repos = new Set(methods.map((m) => repoOf(m.name)));
    const stale = Object.keys(SYSTEM_ACCESS).filter((k) => (k.includes('.') ? !names.has(k) : !repos.has(k)));
    expect(stale).toEqual([]);
    const scopedButListed = methods.filter((m) => m.scoped && SYSTEM_ACCESS[m.name]).map((m) => m.name);
    expect(scopedButListed).toEqual([]);
  });

  it('repositories build tenancy filters only through common/tenant-scope (no filter written by hand)', () => {
    const handWritten: string[] = [];
    for (const file of new Set(methods.map((m) => m.file))) {
      const text = readFileSync(join(__dirname, file), 'utf8');
      for (const re of [/scope\.kind\s*[!=]==/, /scope\.teamId/, /\btenantWhere\b/]) if (re.test(text)) handWritten.push(`${file}: ${re.source}`);
    }
    expect(handWritten).toEqual([]);
  });
});

describe('the one filter', () => {
  const tenantA: TenantScope = { kind: 'tenant', tenantId: 'A', teamId: null };
  const teamA1: TenantScope = { kind: 'tenant', tenantId: 'A', teamId: 'A1' };

  it('confines a tenant to its rows and a team-bound caller to its team', () => {
    expect(scopeWhere(tenantA, 'team-rows')).toEqual({ tenantId: 'A' });
    expect(scopeWhere(teamA1, 'team-rows')).toEqual({ tenantId: 'A', teamId: 'A1' });
    expect(scopeWhere(teamA1, 'tenant-rows')).toEqual({ tenantId: 'A' });
    expect(scopeWhere(teamA1, 'tenant')).toEqual({ id: 'A' });
    expect(scopeWhere(teamA1, 'team')).toEqual({ tenantId: 'A', id: 'A1' });
    expect(scopeWhere(teamA1, 'quota')).toEqual({ team: { tenantId: 'A', id: 'A1' } });
    expect(scopeWhere(SYSTEM_SCOPE, 'team-rows')).toEqual({});
    // the same filter as typed-SQL parameters (null: no condition)
    expect(scopeValues(tenantA)).toEqual({ tenantId: 'A', teamId: null });
    expect(scopeValues(teamA1)).toEqual({ tenantId: 'A', teamId: 'A1' });
    expect(scopeValues(SYSTEM_SCOPE)).toEqual({ tenantId: null, teamId: null });
  });

  it('lets a create through only inside the scope', () => {
    expect(covers(tenantA, { tenantId: 'A', teamId: 'A2' })).toBe(true);
    expect(covers(tenantA, { tenantId: 'B', teamId: 'B1' })).toBe(false);
    expect(covers(teamA1, { tenantId: 'A', teamId: 'A2' })).toBe(false);
    expect(covers(teamA1, { tenantId: 'A', teamId: null })).toBe(false);
    expect(covers(tenantA, { tenantId: null })).toBe(false);
    expect(covers(SYSTEM_SCOPE, { tenantId: null })).toBe(true);
  });
});
