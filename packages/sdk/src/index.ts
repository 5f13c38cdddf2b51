import type {
  ApiKey,
  ApiKeyCreate,
  ApiKeyCreated,
  Capacity,
  ErrorBody,
  Gpu,
  Job,
  JobCreate,
  JobDetail,
  Me,
  Node,
  NodeDetail,
  Page,
  Team,
  TeamCreate,
  Tenant,
  TenantCreate,
} from '@gantry/contracts';

export interface GantryClientOptions {
  /** e.g. http://127.0.0.1:4000 ; '' for same-origin (the console proxies /v1). */
  baseUrl: string;
  /** `gk_...` API key; omitted when a session cookie authenticates. */
  apiKey?: string;
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
  };

  apiKeys = {
    list: (q: { limit?: number; cursor?: string } = {}) => this.request<Page<ApiKey>>('GET', '/v1/api-keys', { query: q }),
    create: (body: ApiKeyCreate) => this.request<ApiKeyCreated>('POST', '/v1/api-keys', { body }),
    revoke: (id: string) => this.request<void>('DELETE', `/v1/api-keys/${enc(id)}`),
  };

  jobs = {
    list: (q: { teamId?: string; state?: string; limit?: number; cursor?: string } = {}) =>
      this.request<Page<Job>>('GET', '/v1/jobs', { query: q }),
    get: (id: string) => this.request<JobDetail>('GET', `/v1/jobs/${enc(id)}`),
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

  nodes = {
    list: (q: { leaf?: string; state?: string; gpuModel?: string; limit?: number; cursor?: string } = {}) =>
      this.request<Page<Node>>('GET', '/v1/nodes', { query: q }),
    get: (id: string) => this.request<NodeDetail>('GET', `/v1/nodes/${enc(id)}`),
  };

  gpus = {
    list: (q: { nodeId?: string; model?: string; health?: string; limit?: number; cursor?: string } = {}) =>
      this.request<Page<Gpu>>('GET', '/v1/gpus', { query: q }),
  };

  utilization = {
    capacity: () => this.request<Capacity>('GET', '/v1/utilization'),
  };

  private async request<T>(
    method: string,
    path: string,
    init: { query?: Query; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<T> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(init.query ?? {})) if (v !== undefined && v !== '') qs.set(k, String(v));
    const url = `${this.opts.baseUrl}${path}${qs.size ? `?${qs}` : ''}`;
    const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
    if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
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
