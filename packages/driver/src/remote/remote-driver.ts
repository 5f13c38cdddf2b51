/**
 * A ClusterDriver that drives a cluster served by another process (cluster-host.ts): every
 * call is an HTTP request; events arrive on one server-sent-event stream that reconnects
 * after the host restarts. Events sent while disconnected are lost, as with a Kubernetes
 * watch: the worker's reconciler re-derives what they would have told it.
 */
import { Agent, request } from 'node:http';
import { DriverEventBus } from '../event-bus';
import type {
  BareMetalOperation,
  ClusterDriver,
  DriverEvent,
  FaultInjection,
  GpuMetricSample,
  Inventory,
  InventoryNode,
  JobLogQuery,
  JobLogRequest,
  JobLogs,
  MigSliceSpec,
  Persona,
  StartOutcome,
  StartRequest,
  WorkloadStatus,
} from '../types';
import { MigLayoutError } from '../shared/mig-layout';
import type { RemoteMethod, RpcError, RpcResponse, RpcStartOutcome } from './protocol';

/** An error raised by the hosted driver, with its original name. */
export class RemoteDriverError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

function toError(e: RpcError): Error {
  return e.mig ? new MigLayoutError(e.mig.model, e.mig.violations) : new RemoteDriverError(e.name, e.message);
}

export interface RemoteDriverOptions {
  /** Base URL of the cluster host, e.g. http://127.0.0.1:4300 */
  url: string;
  /** Delay before reconnecting the event stream; default 500 ms. */
  reconnectMs?: number;
}

export class RemoteDriver implements ClusterDriver {
  readonly name = 'simulated' as const;
  private readonly base: URL;
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 64 });
  private readonly bus = new DriverEventBus();
  private stream?: { destroy(): void };
  private closed = false;

  constructor(private readonly options: RemoteDriverOptions) {
    this.base = new URL(options.url);
  }

  discover(): Promise<Inventory> {
    return this.call('discover');
  }
  async discoverNode(nodeName: string): Promise<InventoryNode | undefined> {
    // JSON has no undefined: the host answers null for a node it does not have
    return (await this.call<InventoryNode | null>('discoverNode', nodeName)) ?? undefined;
  }
  applyMigLayout(nodeName: string, gpuIndex: number, layout: MigSliceSpec[]): Promise<void> {
    return this.call('applyMigLayout', nodeName, gpuIndex, layout);
  }
  setPersona(nodeName: string, persona: Persona): Promise<void> {
    return this.call('setPersona', nodeName, persona);
  }
  setPower(nodeName: string, state: 'on' | 'off'): Promise<void> {
    return this.call('setPower', nodeName, state);
  }
  cordon(nodeName: string): Promise<void> {
    return this.call('cordon', nodeName);
  }
  uncordon(nodeName: string): Promise<void> {
    return this.call('uncordon', nodeName);
  }
  drain(nodeName: string): Promise<void> {
    return this.call('drain', nodeName);
  }
  start(req: StartRequest): Promise<void> {
    return this.call('start', req);
  }

  /** One request for all the starts: the host runs them as its driver does best. */
  async startMany(requests: readonly StartRequest[]): Promise<StartOutcome[]> {
    if (requests.length === 0) return [];
    const outcomes = await this.call<RpcStartOutcome[]>('startMany', requests);
    return outcomes.map((o) => (o.ok ? { jobId: o.jobId, ok: true } : { jobId: o.jobId, ok: false, error: toError(o.error) }));
  }
  stop(jobId: string): Promise<void> {
    return this.call('stop', jobId);
  }
  /** One request for the runs of a batch of ended jobs. */
  async stopMany(jobIds: readonly string[]): Promise<(Error | null)[]> {
    if (jobIds.length === 0) return [];
    const errors = await this.call<(RpcError | null)[]>('stopMany', jobIds);
    return errors.map((e) => (e ? toError(e) : null));
  }
  suspend(jobId: string): Promise<{ checkpoint: string; progressSeconds: number }> {
    return this.call('suspend', jobId);
  }
  status(jobId: string): Promise<WorkloadStatus> {
    return this.call('status', jobId);
  }
  /** One request for a whole reconciliation round. */
  statusMany(jobIds: readonly string[]): Promise<WorkloadStatus[]> {
    return jobIds.length ? this.call('statusMany', jobIds) : Promise.resolve([]);
  }
  metrics(): Promise<GpuMetricSample[]> {
    return this.call('metrics');
  }
  logs(jobId: string, query?: JobLogQuery): Promise<JobLogs> {
    return this.call('logs', jobId, query);
  }
  /** One request for a whole log collection round. */
  logsMany(requests: readonly JobLogRequest[]): Promise<(JobLogs | null)[]> {
    return requests.length ? this.call('logsMany', requests) : Promise.resolve([]);
  }
  injectFault(fault: FaultInjection): Promise<void> {
    return this.call('injectFault', fault);
  }
  resetGpu(nodeName: string, gpuIndex: number): Promise<void> {
    return this.call('resetGpu', nodeName, gpuIndex);
  }
  rebootNode(nodeName: string): Promise<void> {
    return this.call('rebootNode', nodeName);
  }
  bareMetal(nodeName: string, op: BareMetalOperation): Promise<void> {
    return this.call('bareMetal', nodeName, op);
  }

  onEvent(listener: (e: DriverEvent) => void): () => void {
    if (!this.stream && !this.closed) this.connect();
    return this.bus.on(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stream?.destroy();
    this.bus.clear();
    this.agent.destroy();
  }

  private call<T>(method: RemoteMethod, ...args: unknown[]): Promise<T> {
    const body = JSON.stringify({ args });
    return new Promise<T>((resolve, reject) => {
      const req = request(
        new URL(`/rpc/${method}`, this.base),
        { method: 'POST', agent: this.agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            try {
              const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as RpcResponse;
              if ('error' in parsed) reject(toError(parsed.error));
              else resolve(parsed.result as T);
            } catch {
              reject(new RemoteDriverError('RemoteDriverError', `cluster host answered ${res.statusCode} to ${method} with an unreadable body`));
            }
          });
        },
      );
      req.on('error', (e) => reject(new RemoteDriverError('ClusterUnreachable', `cluster host ${this.base.origin} unreachable (${method}): ${e.message}`)));
      req.end(body);
    });
  }

  /** One event stream; reconnects until close(). */
  private connect(): void {
    let buffer = '';
    const retry = () => {
      this.stream = undefined;
      if (!this.closed) setTimeout(() => !this.closed && !this.stream && this.connect(), this.options.reconnectMs ?? 500).unref();
    };
    const req = request(new URL('/events', this.base), { method: 'GET', headers: { accept: 'text/event-stream' } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!frame.startsWith('data: ')) continue;
          try {
            this.bus.emit(JSON.parse(frame.slice(6)) as DriverEvent);
          } catch {
            // a malformed frame is dropped; the reconciler covers what it would have said
          }
        }
      });
      res.on('end', retry);
      res.on('error', () => undefined);
    });
    req.on('error', retry);
    req.end();
    this.stream = req;
  }
}
