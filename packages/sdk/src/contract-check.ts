/**
 * Compile-time check that the SDK's types (from @gantry/contracts) and the committed OpenAPI
 * document say the same thing. When the API changes a shape and the document is regenerated,
 * this file stops compiling until the contracts agree. Nothing here runs.
 */
import type { AuditEntry, LoginResult, QuotasPut, TeamQuotas, TeamUsage as TeamUsageReport, TenantQuota, User } from '@gantry/contracts';
import type { BareMetalLease, BareMetalLeaseList } from '@gantry/contracts';
import type { Fairness } from '@gantry/contracts';
import type {
  FaultAccepted,
  FaultRequest,
  Incident,
  IncidentActionAccepted,
  IntegrityReport,
  MigChangeAccepted,
  NodeActionResult,
  Topology,
} from '@gantry/contracts';
import type {
  Endpoint,
  EndpointCreate,
  EndpointDetail,
  EndpointInvokeResult,
  Capacity,
  Gpu,
  Job,
  JobCreate,
  JobDetail,
  JobLogs,
  JobsSummary,
  Me,
  Node,
  NodeDetail,
  Page,
  Team,
  Tenant,
} from '@gantry/contracts';
import type { GpuHeatmap, IdleAllocations, UtilizationReport } from '@gantry/contracts';
import type { Schedule, ScheduleCreate, ScheduleList, TeamResumeResult, TeamSuspendResult } from '@gantry/contracts';
import type { PlannerRun } from '@gantry/contracts';
import type { Reservation, ReservationCreate, ReservationList, ReservationUpdate } from '@gantry/contracts';
import type { RequestOf, ResponseOf } from './openapi-types';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const same = <T extends true>(_: T) => undefined;

same<Same<ResponseOf<'/v1/jobs/{id}', 'get'>, JobDetail>>(true);
same<Same<ResponseOf<'/v1/jobs/{id}/logs', 'get'>, JobLogs>>(true);
same<Same<ResponseOf<'/v1/jobs/summary', 'get'>, JobsSummary>>(true);
same<Same<ResponseOf<'/v1/jobs', 'get'>, Page<Job>>>(true);
same<Same<ResponseOf<'/v1/jobs', 'post'>, Job>>(true);
same<Same<ResponseOf<'/v1/me', 'get'>, Me>>(true);
same<Same<ResponseOf<'/v1/nodes', 'get'>, Page<Node>>>(true);
same<Same<ResponseOf<'/v1/nodes/{id}', 'get'>, NodeDetail>>(true);
same<Same<ResponseOf<'/v1/gpus', 'get'>, Page<Gpu>>>(true);
same<Same<ResponseOf<'/v1/utilization', 'get'>, Capacity | UtilizationReport>>(true);
same<Same<ResponseOf<'/v1/utilization/idle', 'get'>, IdleAllocations>>(true);
same<Same<ResponseOf<'/v1/utilization/gpus', 'get'>, GpuHeatmap>>(true);
same<Same<ResponseOf<'/v1/tenants/{id}', 'get'>, Tenant>>(true);
same<Same<ResponseOf<'/v1/teams/{id}', 'get'>, Team>>(true);
same<RequestOf<'/v1/jobs', 'post'> extends object ? (JobCreate extends RequestOf<'/v1/jobs', 'post'> ? true : false) : false>(true);
same<Same<ResponseOf<'/v1/endpoints', 'get'>, Page<Endpoint>>>(true);
same<Same<ResponseOf<'/v1/endpoints', 'post'>, Endpoint>>(true);
same<Same<ResponseOf<'/v1/endpoints/{id}', 'get'>, EndpointDetail>>(true);
same<Same<ResponseOf<'/v1/endpoints/{id}/invoke', 'post'>, EndpointInvokeResult>>(true);
same<RequestOf<'/v1/endpoints', 'post'> extends object ? (EndpointCreate extends RequestOf<'/v1/endpoints', 'post'> ? true : false) : false>(true);
same<Same<ResponseOf<'/v1/incidents', 'get'>, Page<Incident>>>(true);
same<Same<ResponseOf<'/v1/incidents/{id}/burn-in', 'post'>, IncidentActionAccepted>>(true);
same<Same<ResponseOf<'/v1/incidents/{id}/release', 'post'>, IncidentActionAccepted>>(true);
same<Same<ResponseOf<'/v1/fairness', 'get'>, Fairness>>(true);
same<Same<ResponseOf<'/v1/topology', 'get'>, Topology>>(true);
same<Same<ResponseOf<'/v1/cluster/integrity', 'get'>, IntegrityReport>>(true);
same<Same<ResponseOf<'/v1/gpus/{id}/mig', 'put'>, MigChangeAccepted>>(true);
same<Same<ResponseOf<'/v1/nodes/{id}/persona', 'put'>, NodeActionResult>>(true);
same<Same<ResponseOf<'/v1/nodes/{id}/cordon', 'post'>, NodeActionResult>>(true);
same<Same<ResponseOf<'/v1/sim/faults', 'post'>, FaultAccepted>>(true);
same<RequestOf<'/v1/sim/faults', 'post'> extends object ? (FaultRequest extends RequestOf<'/v1/sim/faults', 'post'> ? true : false) : false>(true);
// Tenancy administration: quotas, usage, users, sessions, audit.
same<Same<ResponseOf<'/v1/teams/{id}/quotas', 'get'>, TeamQuotas>>(true);
same<Same<ResponseOf<'/v1/teams/{id}/quotas', 'put'>, TeamQuotas>>(true);
same<RequestOf<'/v1/teams/{id}/quotas', 'put'> extends object ? (QuotasPut extends RequestOf<'/v1/teams/{id}/quotas', 'put'> ? true : false) : false>(true);
same<Same<ResponseOf<'/v1/teams/{id}/usage', 'get'>, TeamUsageReport>>(true);
same<Same<ResponseOf<'/v1/tenants/{id}/quota', 'get'>, TenantQuota>>(true);
same<Same<ResponseOf<'/v1/auth/login', 'post'>, LoginResult>>(true);
same<Same<ResponseOf<'/v1/users', 'get'>, Page<User>>>(true);
same<Same<ResponseOf<'/v1/users', 'post'>, User>>(true);
same<Same<ResponseOf<'/v1/audit', 'get'>, Page<AuditEntry>>>(true);
// Team suspend and resume: a whole team suspended or resumed in one action, and its schedules.
same<Same<ResponseOf<'/v1/teams/{id}/suspend', 'post'>, TeamSuspendResult>>(true);
same<Same<ResponseOf<'/v1/teams/{id}/resume', 'post'>, TeamResumeResult>>(true);
same<Same<ResponseOf<'/v1/teams/{id}/schedules', 'get'>, ScheduleList>>(true);
same<Same<ResponseOf<'/v1/teams/{id}/schedules', 'post'>, Schedule>>(true);
same<
  RequestOf<'/v1/teams/{id}/schedules', 'post'> extends object ? (ScheduleCreate extends RequestOf<'/v1/teams/{id}/schedules', 'post'> ? true : false) : false
>(true);
same<Same<ResponseOf<'/v1/planner/runs/{id}', 'get'>, PlannerRun>>(true);
// Bare-metal leases.
same<Same<ResponseOf<'/v1/bare-metal/leases/{id}', 'get'>, BareMetalLease>>(true);
same<Same<ResponseOf<'/v1/bare-metal/leases', 'get'>, BareMetalLeaseList>>(true);
// Reservations
same<Same<ResponseOf<'/v1/reservations', 'get'>, ReservationList>>(true);
same<Same<ResponseOf<'/v1/reservations', 'post'>, Reservation>>(true);
same<Same<ResponseOf<'/v1/reservations/{id}', 'get'>, Reservation>>(true);
same<RequestOf<'/v1/reservations', 'post'> extends object ? (ReservationCreate extends RequestOf<'/v1/reservations', 'post'> ? true : false) : false>(true);
same<Same<ResponseOf<'/v1/reservations/{id}', 'patch'>, Reservation>>(true);
same<ReservationUpdate extends RequestOf<'/v1/reservations/{id}', 'patch'> ? true : false>(true);
