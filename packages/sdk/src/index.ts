import type { Fairness, Reservation, ReservationCreate, ReservationList, ReservationUpdate } from '@gantry/contracts';
import type {
  BareMetalLease,
  BareMetalLeaseCreate,
  BareMetalLeaseList,
  PlannerRun,
  PlannerRunCreate,
  Schedule,
  ScheduleCreate,
  ScheduleList,
  TeamResumeResult,
  TeamSuspendResult,
  ApiKey,
  ApiKeyCreate,
  ApiKeyCreated,
  AuditEntry,
  Login,
  LoginResult,
  KeySessionResult,
  QuotasPut,
  TeamQuotas,
  TeamUsage as TeamUsageReport,
  TenantQuota,
  User,
  UserCreate,
  Capacity,
  Endpoint,
  EndpointCreate,
  EndpointDetail,
  EndpointInvokeResult,
  EndpointUpdate,
  FaultAccepted,
  FaultRequest,
  Incident,
  IncidentActionAccepted,
  IntegrityReport,
  MigChangeAccepted,
  MigLayoutEntry,
  NodeActionResult,
  Persona,
  Topology,
  SimTrafficAccepted,
  ErrorBody,
  Gpu,
  Job,
  JobCreate,
  JobDetail,
  JobsSummary,
  JobLogs,
  Me,
  Node,
  NodeDetail,
  Page,
  Team,
  TeamCreate,
  Tenant,
  TenantCreate,
  GpuHeatmap,
  IdleAllocations,
  UtilizationGroupBy,
  UtilizationReport,
  LiveEvent,
} from '@gantry/contracts';

/** Query of a utilization report (`step`: seconds or 60s, 5m, 1h, 1d). */
export interface UtilizationReportQuery {
  groupBy: UtilizationGroupBy;
  from?: string;
  to?: string;
  step?: string | number;
}

/** One message of the live event stream (`/v1/events/stream`): the contracts' type. */
export type { LiveEvent } from '@gantry/contracts';

export interface GantryClientOptions {
  /** e.g. http://127.0.0.1:4000 ; '' for same-origin (the console proxies /v1). */
  baseUrl: string;
  /** `gk_...` API key; omitted when a session cookie authenticates. */
  apiKey?: string;
  /**
   * With a session cookie (no apiKey): the CSRF token to send as `X-CSRF-Token` on changes
   * (the console reads it from the `gantry_csrf` cookie).
   */
  csrfToken?: () => string | undefined;
  fetch?: typeof fetch;
}

/** A non-2xx answer of the API, carrying the error envelope. */
export class GantryApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ErrorBody['error']['details'] = [],
  ) {
    super(message);
    this.name = 'GantryApiError';
  }
}

type Query = Record<string, string | number | undefined>;

/** Typed client of the Gantry REST API (v1). */
export class GantryClient {
  constructor(private readonly opts: GantryClientOptions) {}

  me = () => this.request<Me>('GET', '/v1/me');

  tenants = {
    list: (q: { limit?: number; cursor?: string } = {}) => this.request<Page<Tenant>>('GET', '/v1/tenants', { query: q }),
    get: (id: string) => this.request<Tenant>('GET', `/v1/tenants/${enc(id)}`),
    create: (body: TenantCreate) => this.request<Tenant>('POST', '/v1/tenants', { body }),
  };

  teams = {
    list: (tenantId: string, q: { limit?: number; cursor?: string } = {}) =>
      this.request<Page<Team>>('GET', `/v1/tenants/${enc(tenantId)}/teams`, { query: q }),
    get: (id: string) => this.request<Team>('GET', `/v1/teams/${enc(id)}`),
    create: (tenantId: string, body: TeamCreate) => this.request<Team>('POST', `/v1/tenants/${enc(tenantId)}/teams`, { body }),
    /** Suspends every suspendable active job of the team (training, notebook, vm, cluster). */
    suspend: (teamId: string) => this.request<TeamSuspendResult>('POST', `/v1/teams/${enc(teamId)}/suspend`),
    /** Queues every suspended job of the team again; admission follows quota and priority. */
    resume: (teamId: string) => this.request<TeamResumeResult>('POST', `/v1/teams/${enc(teamId)}/resume`),
  };

  /** Suspend and resume windows: a 5-field cron in an IANA time zone, for a team or one of its jobs. */
  planner = {
    create: (body: PlannerRunCreate) => this.request<PlannerRun>('POST', '/v1/planner/runs', { body }),
    list: () => this.request<{ items: PlannerRun[] }>('GET', '/v1/planner/runs'),
    get: (id: string) => this.request<PlannerRun>('GET', `/v1/planner/runs/${enc(id)}`),
    cancel: (id: string) => this.request<PlannerRun>('POST', `/v1/planner/runs/${enc(id)}/cancel`),
  };

  /** Bare-metal leases (docs/bare-metal.md): whole nodes provisioned with an image. */
  bareMetal = {
    create: (body: BareMetalLeaseCreate) => this.request<BareMetalLease>('POST', '/v1/bare-metal/leases', { body }),
    list: (q: { teamId?: string } = {}) => this.request<BareMetalLeaseList>('GET', '/v1/bare-metal/leases', { query: q }),
    get: (id: string) => this.request<BareMetalLease>('GET', `/v1/bare-metal/leases/${enc(id)}`),
    suspend: (id: string) => this.request<BareMetalLease>('POST', `/v1/bare-metal/leases/${enc(id)}/suspend`),
    resume: (id: string) => this.request<BareMetalLease>('POST', `/v1/bare-metal/leases/${enc(id)}/resume`),
    release: (id: string) => this.request<BareMetalLease>('POST', `/v1/bare-metal/leases/${enc(id)}/release`),
  };

  schedules = {
    list: (teamId: string) => this.request<ScheduleList>('GET', `/v1/teams/${enc(teamId)}/schedules`),
    /** 400 names the field for a bad cron or an unknown time zone. */
    create: (teamId: string, body: ScheduleCreate) => this.request<Schedule>('POST', `/v1/teams/${enc(teamId)}/schedules`, { body }),
    remove: (id: string) => this.request<void>('DELETE', `/v1/schedules/${enc(id)}`),
  };

  /** Reservations: GPUs or whole nodes of a model held for a team in a window (409 names the conflicting reservations and the window). */
  reservations = {
    list: (q: { gpuModel?: string; teamId?: string; from?: string; to?: string } = {}) =>
      this.request<ReservationList>('GET', '/v1/reservations', { query: q }),
    get: (id: string) => this.request<Reservation>('GET', `/v1/reservations/${enc(id)}`),
    create: (body: ReservationCreate) => this.request<Reservation>('POST', '/v1/reservations', { body }),
    /** The fields given replace the reservation's; checked as a create is (409 for capacity or quota). */
    update: (id: string, body: ReservationUpdate) => this.request<Reservation>('PATCH', `/v1/reservations/${enc(id)}`, { body }),
    remove: (id: string) => this.request<void>('DELETE', `/v1/reservations/${enc(id)}`),
  };

  apiKeys = {
    list: (q: { limit?: number; cursor?: string } = {}) => this.request<Page<ApiKey>>('GET', '/v1/api-keys', { query: q }),
    create: (body: ApiKeyCreate) => this.request<ApiKeyCreated>('POST', '/v1/api-keys', { body }),
    revoke: (id: string) => this.request<void>('DELETE', `/v1/api-keys/${enc(id)}`),
  };

  jobs = {
    list: (q: { teamId?: string; state?: string; limit?: number; cursor?: string } = {}) => this.request<Page<Job>>('GET', '/v1/jobs', { query: q }),
    get: (id: string) => this.request<JobDetail>('GET', `/v1/jobs/${enc(id)}`),
    /** Jobs in each state and the head of the queue (what the console's Overview shows). */
    summary: (q: { teamId?: string } = {}) => this.request<JobsSummary>('GET', '/v1/jobs/summary', { query: q }),
    /** What the job's replicas wrote: the newest `tail` lines at or after `since` (follow with the last line's time). */
    logs: (id: string, q: { tail?: number; since?: string } = {}) => this.request<JobLogs>('GET', `/v1/jobs/${enc(id)}/logs`, { query: q }),
    create: (body: JobCreate, opts: { idempotencyKey?: string } = {}) =>
      this.request<Job>('POST', '/v1/jobs', {
        body,
        headers: opts.idempotencyKey ? { 'Idempotency-Key': opts.idempotencyKey } : undefined,
      }),
    cancel: (id: string) => this.request<Job>('POST', `/v1/jobs/${enc(id)}/cancel`),
    /** Checkpoints the job and frees its GPUs (training, notebook, vm, cluster). */
    suspend: (id: string) => this.request<Job>('POST', `/v1/jobs/${enc(id)}/suspend`),
    /** Queues a suspended job again with its checkpoint. */
    resume: (id: string) => this.request<Job>('POST', `/v1/jobs/${enc(id)}/resume`),
  };

  endpoints = {
    list: (q: { teamId?: string; limit?: number; cursor?: string } = {}) => this.request<Page<Endpoint>>('GET', '/v1/endpoints', { query: q }),
    get: (id: string) => this.request<EndpointDetail>('GET', `/v1/endpoints/${enc(id)}`),
    /** With an idempotency key, a retry (a double click, a lost answer) creates one endpoint. */
    create: (body: EndpointCreate, opts: { idempotencyKey?: string } = {}) =>
      this.request<Endpoint>('POST', '/v1/endpoints', {
        body,
        headers: opts.idempotencyKey ? { 'Idempotency-Key': opts.idempotencyKey } : undefined,
      }),
    update: (id: string, body: EndpointUpdate) => this.request<EndpointDetail>('PATCH', `/v1/endpoints/${enc(id)}`, { body }),
    remove: (id: string) => this.request<void>('DELETE', `/v1/endpoints/${enc(id)}`),
    /** Manual scale, held for one stable window; 409 beyond maxReplicas or quota. */
    scale: (id: string, replicas: number) => this.request<EndpointDetail>('POST', `/v1/endpoints/${enc(id)}/scale`, { body: { replicas } }),
    /** At zero replicas the activator holds the request until a replica is ready. */
    invoke: (id: string, input?: string) =>
      this.request<EndpointInvokeResult>('POST', `/v1/endpoints/${enc(id)}/invoke`, { body: input === undefined ? {} : { input } }),
  };

  sim = {
    /** Simulated driver only: traffic to an endpoint for the autoscaler. */
    traffic: (body: { endpointId: string; rps: number; durationSeconds: number }) => this.request<SimTrafficAccepted>('POST', '/v1/sim/traffic', { body }),
    /** Simulated driver only: inject a fault (xid, nic-down, node-down, recover); cluster:admin. */
    fault: (body: FaultRequest) => this.request<FaultAccepted>('POST', '/v1/sim/faults', { body }),
  };

  nodes = {
    list: (q: { leaf?: string; state?: string; gpuModel?: string; limit?: number; cursor?: string } = {}) =>
      this.request<Page<Node>>('GET', '/v1/nodes', { query: q }),
    get: (id: string) => this.request<NodeDetail>('GET', `/v1/nodes/${enc(id)}`),
    cordon: (id: string, reason?: string) => this.request<NodeActionResult>('POST', `/v1/nodes/${enc(id)}/cordon`, { body: reason ? { reason } : {} }),
    uncordon: (id: string) => this.request<NodeActionResult>('POST', `/v1/nodes/${enc(id)}/uncordon`, { body: {} }),
    drain: (id: string, reason?: string) => this.request<NodeActionResult>('POST', `/v1/nodes/${enc(id)}/drain`, { body: reason ? { reason } : {} }),
    setPersona: (id: string, persona: Persona) => this.request<NodeActionResult>('PUT', `/v1/nodes/${enc(id)}/persona`, { body: { persona } }),
    /** Power a node on or off by hand (202 while it changes; off is a 409 while it holds work). */
    setPower: (id: string, state: 'on' | 'off', reason?: string) =>
      this.request<NodeActionResult>('POST', `/v1/nodes/${enc(id)}/power`, { body: reason ? { state, reason } : { state } }),
  };

  gpus = {
    list: (q: { nodeId?: string; model?: string; health?: string; limit?: number; cursor?: string } = {}) =>
      this.request<Page<Gpu>>('GET', '/v1/gpus', { query: q }),
    /** The GPU's whole MIG layout ([] = MIG off); answers 202 while it is applied. */
    setMig: (id: string, layout: MigLayoutEntry[]) => this.request<MigChangeAccepted>('PUT', `/v1/gpus/${enc(id)}/mig`, { body: { layout } }),
  };

  topology = {
    get: () => this.request<Topology>('GET', '/v1/topology'),
  };

  /** Operators: the invariant checker over the database, now (`settled`: also stuck transitions). */
  integrity = {
    check: (q: { settled?: boolean } = {}) =>
      this.request<IntegrityReport>('GET', '/v1/cluster/integrity', { query: q.settled === undefined ? {} : { settled: String(q.settled) } }),
  };

  /** Fair share over time between the caller's tenant's teams, the head of the queue and why its first job is next. */
  fairness = {
    get: () => this.request<Fairness>('GET', '/v1/fairness'),
  };

  incidents = {
    list: (q: { state?: string; nodeId?: string; limit?: number; cursor?: string } = {}) => this.request<Page<Incident>>('GET', '/v1/incidents', { query: q }),
    /** An incident that failed burn-in (`needs-attention`): run the burn-in again, e.g. after replacing the part. */
    retryBurnIn: (id: string) => this.request<IncidentActionAccepted>('POST', `/v1/incidents/${enc(id)}/burn-in`, { body: {} }),
    /** An incident that failed burn-in: put the hardware back into service without a pass. */
    release: (id: string) => this.request<IncidentActionAccepted>('POST', `/v1/incidents/${enc(id)}/release`, { body: {} }),
  };

  /** Console sessions: email + password sign-in sets an httpOnly cookie; the answer carries the CSRF token. */
  auth = {
    login: (body: Login) => this.request<LoginResult>('POST', '/v1/auth/login', { body }),
    /** Exchanges this client's API key for a console session cookie (the browser then forgets the key). */
    keySession: () => this.request<KeySessionResult>('POST', '/v1/auth/key-session'),
    logout: () => this.request<void>('POST', '/v1/auth/logout'),
  };

  users = {
    list: (q: { limit?: number; cursor?: string } = {}) => this.request<Page<User>>('GET', '/v1/users', { query: q }),
    create: (body: UserCreate) => this.request<User>('POST', '/v1/users', { body }),
  };

  quotas = {
    get: (teamId: string) => this.request<TeamQuotas>('GET', `/v1/teams/${enc(teamId)}/quotas`),
    /** Replaces the team's rows; 400/409 name the broken rule, 403 above the tenant admin's ceiling. */
    put: (teamId: string, body: QuotasPut) => this.request<TeamQuotas>('PUT', `/v1/teams/${enc(teamId)}/quotas`, { body }),
    usage: (teamId: string) => this.request<TeamUsageReport>('GET', `/v1/teams/${enc(teamId)}/usage`),
    tenant: (tenantId: string) => this.request<TenantQuota>('GET', `/v1/tenants/${enc(tenantId)}/quota`),
    /** Platform admin: the tenant's GPU total (null = unlimited). */
    setTenant: (tenantId: string, gpuTotal: number | null) => this.request<TenantQuota>('PUT', `/v1/tenants/${enc(tenantId)}/quota`, { body: { gpuTotal } }),
  };

  audit = {
    /** A tenant admin reads the tenant's entries, a team admin its team's; `outcome: 'refused'` only the refused changes. */
    list: (q: { action?: string; actor?: string; from?: string; to?: string; outcome?: 'refused'; limit?: number; cursor?: string } = {}) =>
      this.request<Page<AuditEntry>>('GET', '/v1/audit', { query: q }),
    /** Every matching entry (newest first, at most 10,000) as CSV text. */
    csv: (q: { action?: string; actor?: string; from?: string; to?: string; outcome?: 'refused' } = {}) =>
      this.request<string>('GET', '/v1/audit', { query: { ...q, format: 'csv' }, text: true }),
  };

  utilization = {
    capacity: () => this.request<Capacity>('GET', '/v1/utilization'),
    report: (q: UtilizationReportQuery) => this.request<UtilizationReport>('GET', '/v1/utilization', { query: { ...q } }),
    /** The report as CSV text (chargeback export). */
    csv: (q: UtilizationReportQuery) => this.request<string>('GET', '/v1/utilization', { query: { ...q, format: 'csv' }, text: true }),
    idle: (q: { minIdleSeconds?: number; limit?: number } = {}) => this.request<IdleAllocations>('GET', '/v1/utilization/idle', { query: q }),
    gpus: () => this.request<GpuHeatmap>('GET', '/v1/utilization/gpus'),
  };

  events = {
    /**
     * Follows `/v1/events/stream` (SSE over fetch, so that the API key travels in a header)
     * until `signal` aborts; resolves when the stream ends.
     */
    stream: async (onEvent: (e: LiveEvent) => void, opts: { signal?: AbortSignal; onOpen?: () => void } = {}): Promise<void> => {
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
      const res = await (this.opts.fetch ?? fetch)(`${this.opts.baseUrl}/v1/events/stream`, { headers, signal: opts.signal, credentials: 'include' });
      if (!res.ok || !res.body) throw new GantryApiError(res.status, 'http_error', `event stream: HTTP ${res.status}`);
      opts.onOpen?.();
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const type = /^event: (.*)$/m.exec(frame)?.[1];
          const data = frame
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n');
          // The server ends the stream when its credential is revoked (a reconnect then gets 401).
          if (type === 'revoked') {
            await reader.cancel().catch(() => undefined);
            return;
          }
          if (type && type !== 'ready' && type !== 'ping' && data) onEvent(JSON.parse(data) as LiveEvent);
        }
      }
    },
  };

  private async request<T>(
    method: string,
    path: string,
    init: { query?: Query; body?: unknown; headers?: Record<string, string>; text?: boolean } = {},
  ): Promise<T> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(init.query ?? {})) if (v !== undefined && v !== '') qs.set(k, String(v));
    const url = `${this.opts.baseUrl}${path}${qs.size ? `?${qs}` : ''}`;
    const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
    if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
    else if (method !== 'GET' && method !== 'HEAD') {
      const csrf = this.opts.csrfToken?.();
      if (csrf) headers['x-csrf-token'] = csrf;
    }
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    const res = await (this.opts.fetch ?? fetch)(url, {
      method,
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      credentials: 'include',
    });
    const text = await res.text();
    const data = text ? safeJson(text) : undefined;
    if (!res.ok) {
      const err = (data as ErrorBody | undefined)?.error;
      throw new GantryApiError(res.status, err?.code ?? 'http_error', err?.message ?? `HTTP ${res.status}`, err?.details);
    }
    if (init.text) return text as T;
    return data as T;
  }
}

export const createGantryClient = (opts: GantryClientOptions) => new GantryClient(opts);

function enc(s: string) {
  return encodeURIComponent(s);
}
function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
export type { paths, RequestOf, ResponseOf } from './openapi-types';
