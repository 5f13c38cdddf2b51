/**
 * A FAKE Kubernetes API server for tests (node:http): it answers only the endpoints the
 * KubernetesDriver calls, keeps nodes, pods and ConfigMaps in memory, and plays the parts of
 * the cluster the driver waits on: mig-manager (mig.config -> mig.config.state), the GPU
 * Operator's persona swap (workload.config -> allocatable GPU resources) and a kubelet that
 * runs pods (Pending -> Running -> Succeeded after their remaining duration, real seconds).
 * It is not a Kubernetes API server: no validation or auth; resource versions are one counter,
 * watches (nodes, pods, events) replay its recent history, and there is no 410. The real API
 * server tests (*.real.spec.ts) cover what this fake cannot.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface FakeKubeApiOptions {
  migManagerDelayMs?: number;
  personaSwitchDelayMs?: number;
  kubeletStartDelayMs?: number;
  /** mig.config names mig-manager fails to apply. */
  failingMigConfigs?: string[];
}

export interface RecordedRequest {
  method: string;
  path: string;
  contentType?: string;
  body?: Json;
}

export interface FakeGpuNodeSpec {
  name: string;
  product?: string;
  gpuCount?: number;
  gpuMemoryMiB?: number;
  labels?: Record<string, string>;
}

/** A Node as GPU feature discovery and Topograph would label it (H100 HGX by default). */
export function fakeGpuNode(spec: FakeGpuNodeSpec): Json {
  const gpuCount = spec.gpuCount ?? 8;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: spec.name,
      uid: `uid-${spec.name}`,
      labels: {
        'kubernetes.io/hostname': spec.name,
        'nvidia.com/gpu.present': 'true',
        'nvidia.com/gpu.product': spec.product ?? 'NVIDIA-H100-80GB-HBM3',
        'nvidia.com/gpu.count': String(gpuCount),
        'nvidia.com/gpu.memory': String(spec.gpuMemoryMiB ?? 81559),
        'nvidia.com/mig.capable': 'true',
        'nvidia.com/mig.config': 'all-disabled',
        'nvidia.com/mig.config.state': 'success',
        'fabric.topograph.run/tier-0': 'leaf-a',
        'fabric.topograph.run/tier-1': 'spine-a',
        ...spec.labels,
      },
      annotations: {},
    },
    spec: {},
    status: {
      allocatable: { cpu: '128', memory: '1073741824Ki', 'nvidia.com/gpu': String(gpuCount) },
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  };
}

export class FakeKubeApiServer {
  readonly nodes = new Map<string, Json>();
  readonly pods = new Map<string, Json>();
  readonly configMaps = new Map<string, Json>();
  readonly requests: RecordedRequest[] = [];
  /** When set, also served at GET /metrics, standing in for dcgm-exporter. */
  dcgmMetricsText?: string;
  private readonly server: Server;
  private readonly timers = new Set<NodeJS.Timeout>();
  private podCounter = 0;
  private version = 0;
  private readonly history: { kind: WatchKind; type: string; object: Json }[] = [];
  private readonly watchers = new Set<{ kind: WatchKind; matches: (o: Json) => boolean; res: ServerResponse }>();

  constructor(private readonly options: FakeKubeApiOptions = {}) {
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    for (const watcher of this.watchers) watcher.res.end();
    this.watchers.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  addNode(node: Json): void {
    this.nodes.set(node.metadata.name, node);
    this.touch('nodes', 'ADDED', node);
  }

  /** Flips a node's Ready condition, as the node lifecycle controller would. */
  setNodeReady(name: string, ready: boolean): void {
    const node = this.nodes.get(name)!;
    node.status.conditions = [{ type: 'Ready', status: ready ? 'True' : 'False' }];
    this.touch('nodes', 'MODIFIED', node);
  }

  /** A new resourceVersion for a changed object, told to the watches that match it. */
  private touch(kind: WatchKind, type: string, object: Json): void {
    object.metadata.resourceVersion = String(++this.version);
    const event = { kind, type, object: JSON.parse(JSON.stringify(object)) as Json };
    this.history.push(event);
    if (this.history.length > 1000) this.history.shift();
    for (const watcher of this.watchers) {
      if (watcher.kind === kind && watcher.matches(object)) watcher.res.write(`${JSON.stringify({ type, object: event.object })}\n`);
    }
  }

  private watch(kind: WatchKind, matches: (o: Json) => boolean, url: URL, res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'application/json' });
    const from = Number(url.searchParams.get('resourceVersion') ?? 0);
    for (const event of this.history) {
      if (event.kind === kind && Number(event.object.metadata.resourceVersion) > from && matches(event.object)) {
        res.write(`${JSON.stringify({ type: event.type, object: event.object })}\n`);
      }
    }
    const watcher = { kind, matches, res };
    this.watchers.add(watcher);
    res.on('close', () => this.watchers.delete(watcher));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const body = await readBody(req);
    this.requests.push({ method: req.method ?? '', path: url.pathname, contentType: req.headers['content-type'], body });
    const route = `${req.method} ${url.pathname}`;
    let match: RegExpExecArray | null;
    const send = (status: number, payload: Json) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    const notFound = (what: string) => send(404, status(404, 'NotFound', `${what} not found`));

    if (route === 'GET /metrics' && this.dcgmMetricsText !== undefined) {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
      return void res.end(this.dcgmMetricsText);
    }
    const watching = url.searchParams.get('watch') === 'true';
    if (route === 'GET /api/v1') {
      return send(200, {
        kind: 'APIResourceList',
        groupVersion: 'v1',
        resources: [{ name: 'pods/eviction', group: 'policy', version: 'v1', kind: 'Eviction', namespaced: true, singularName: '', verbs: ['create'] }],
      });
    }
    if (route === 'GET /api/v1/events') {
      if (watching) return this.watch('events', () => true, url, res);
      return send(200, list('EventList', [], this.version));
    }
    if (route === 'GET /api/v1/nodes') {
      const selected = bySelector(url.searchParams.get('labelSelector'));
      if (watching) return this.watch('nodes', selected, url, res);
      return send(200, list('NodeList', [...this.nodes.values()].filter(selected), this.version));
    }
    if ((match = /^(GET|PATCH) \/api\/v1\/nodes\/([^/]+)$/.exec(route))) {
      const node = this.nodes.get(match[2]);
      if (!node) return notFound(`nodes "${match[2]}"`);
      if (match[1] === 'GET') return send(200, node);
      if (req.headers['content-type'] !== 'application/merge-patch+json') {
        return send(415, status(415, 'UnsupportedMediaType', `fake supports merge patches only, got ${req.headers['content-type']}`));
      }
      const precondition = body?.metadata?.resourceVersion;
      if (precondition !== undefined && precondition !== node.metadata.resourceVersion) {
        return send(409, status(409, 'Conflict', `Operation cannot be fulfilled on nodes "${match[2]}": the object has been modified`));
      }
      const before = { ...node.metadata.labels };
      const patched = mergePatch(node, body ?? {});
      this.nodes.set(match[2], patched);
      this.touch('nodes', 'MODIFIED', patched);
      this.reactToNodeLabels(match[2], before, patched.metadata.labels ?? {});
      return send(200, patched);
    }
    if (route === 'GET /api/v1/pods') {
      const fieldSelector = url.searchParams.get('fieldSelector') ?? '';
      const onNode = /^spec\.nodeName=(.+)$/.exec(fieldSelector)?.[1];
      const activeOnly = fieldSelector.includes('status.phase!=Succeeded');
      const active = (p: Json) => !activeOnly || (p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
      return send(
        200,
        list(
          'PodList',
          [...this.pods.values()].filter((p) => (!onNode || p.spec?.nodeName === onNode) && active(p)),
          this.version,
        ),
      );
    }
    if ((match = /^(GET|POST) \/api\/v1\/namespaces\/([^/]+)\/pods$/.exec(route))) {
      const namespace = match[2];
      if (match[1] === 'GET') {
        const selected = bySelector(url.searchParams.get('labelSelector'));
        const matches = (p: Json) => p.metadata.namespace === namespace && selected(p);
        if (watching) return this.watch('pods', matches, url, res);
        return send(200, list('PodList', [...this.pods.values()].filter(matches), this.version));
      }
      const key = `${namespace}/${body!.metadata.name}`;
      if (this.pods.has(key)) return send(409, status(409, 'AlreadyExists', `pods "${body!.metadata.name}" already exists`));
      const pod = { ...body, metadata: { ...body!.metadata, namespace, uid: `pod-uid-${++this.podCounter}` }, status: { phase: 'Pending' } };
      this.pods.set(key, pod);
      this.touch('pods', 'ADDED', pod);
      this.runPod(key);
      return send(201, pod);
    }
    if ((match = /^DELETE \/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)$/.exec(route))) {
      const key = `${match[1]}/${match[2]}`;
      const pod = this.pods.get(key);
      if (!pod) return notFound(`pods "${match[2]}"`);
      this.pods.delete(key);
      this.touch('pods', 'DELETED', pod);
      return send(200, pod);
    }
    if ((match = /^POST \/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/eviction$/.exec(route))) {
      const key = `${match[1]}/${match[2]}`;
      const pod = this.pods.get(key);
      if (!pod) return notFound(`pods "${match[2]}"`);
      this.pods.delete(key);
      this.touch('pods', 'DELETED', pod);
      return send(201, status(201, '', 'evicted'));
    }
    if ((match = /^(GET|PUT) \/api\/v1\/namespaces\/([^/]+)\/configmaps\/([^/]+)$/.exec(route))) {
      const key = `${match[2]}/${match[3]}`;
      if (match[1] === 'GET') return this.configMaps.has(key) ? send(200, this.configMaps.get(key)!) : notFound(`configmaps "${match[3]}"`);
      if (body!.metadata.resourceVersion !== this.configMaps.get(key)?.metadata.resourceVersion) {
        return send(409, status(409, 'Conflict', `Operation cannot be fulfilled on configmaps "${match[3]}": the object has been modified`));
      }
      body!.metadata.resourceVersion = String(++this.version);
      this.configMaps.set(key, body!);
      return send(200, body!);
    }
    if ((match = /^POST \/api\/v1\/namespaces\/([^/]+)\/configmaps$/.exec(route))) {
      const key = `${match[1]}/${body!.metadata.name}`;
      if (this.configMaps.has(key)) return send(409, status(409, 'AlreadyExists', `configmaps "${body!.metadata.name}" already exists`));
      body!.metadata.resourceVersion = String(++this.version);
      this.configMaps.set(key, body!);
      return send(201, body!);
    }
    return send(404, status(404, 'NotFound', `the fake API server does not serve ${route}`));
  }

  /** The operator's reactions: mig-manager applies mig.config, the persona swap changes resources. */
  private reactToNodeLabels(name: string, before: Record<string, string>, after: Record<string, string>): void {
    const config = after['nvidia.com/mig.config'];
    if (config !== before['nvidia.com/mig.config']) {
      this.later(1, () => this.setLabel(name, 'nvidia.com/mig.config.state', 'pending'));
      const outcome = this.options.failingMigConfigs?.includes(config) ? 'failed' : 'success';
      this.later(this.options.migManagerDelayMs ?? 20, () => this.setLabel(name, 'nvidia.com/mig.config.state', outcome));
    }
    const workload = after['nvidia.com/gpu.workload.config'];
    if (workload !== (before['nvidia.com/gpu.workload.config'] ?? 'container')) {
      const node = this.nodes.get(name)!;
      const gpus = node.metadata.labels['nvidia.com/gpu.count'];
      delete node.status.allocatable['nvidia.com/gpu'];
      delete node.status.allocatable['nvidia.com/GH100_H100_SXM5_80GB'];
      this.touch('nodes', 'MODIFIED', node);
      this.later(this.options.personaSwitchDelayMs ?? 20, () => {
        const resource = workload === 'vm-passthrough' ? 'nvidia.com/GH100_H100_SXM5_80GB' : 'nvidia.com/gpu';
        const swapped = this.nodes.get(name)!;
        swapped.status.allocatable[resource] = gpus;
        this.touch('nodes', 'MODIFIED', swapped);
      });
    }
  }

  /** The kubelet: Pending, then Running, then Succeeded once the remaining duration has passed. */
  private runPod(key: string): void {
    this.later(this.options.kubeletStartDelayMs ?? 10, () => {
      const pod = this.pods.get(key);
      if (!pod) return;
      const startedAt = new Date().toISOString();
      pod.status = { phase: 'Running', startTime: startedAt, containerStatuses: [{ name: 'workload', state: { running: { startedAt } } }] };
      this.touch('pods', 'MODIFIED', pod);
      const annotations = pod.metadata.annotations ?? {};
      if (annotations['gantry.io/duration-seconds'] === undefined) return;
      const remaining = Number(annotations['gantry.io/duration-seconds']) - Number(annotations['gantry.io/progress-seconds'] ?? 0);
      this.later(Math.max(0, remaining * 1000), () => {
        const running = this.pods.get(key);
        if (running !== pod) return;
        const finishedAt = new Date().toISOString();
        pod.status = {
          phase: 'Succeeded',
          startTime: startedAt,
          containerStatuses: [{ name: 'workload', state: { terminated: { exitCode: 0, startedAt, finishedAt } } }],
        };
        this.touch('pods', 'MODIFIED', pod);
      });
    });
  }

  private setLabel(name: string, key: string, value: string): void {
    const node = this.nodes.get(name);
    if (!node) return;
    node.metadata.labels[key] = value;
    this.touch('nodes', 'MODIFIED', node);
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }
}

function status(code: number, reason: string, message: string): Json {
  return { kind: 'Status', apiVersion: 'v1', status: code < 400 ? 'Success' : 'Failure', code, reason, message };
}

type WatchKind = 'nodes' | 'pods' | 'events';

function list(kind: string, items: Json[], version = 0): Json {
  return { kind, apiVersion: 'v1', metadata: { resourceVersion: String(version) }, items };
}

/** `a=b,c` selectors: equality and existence, nothing more. */
function bySelector(selector: string | null): (object: Json) => boolean {
  const terms = (selector ?? '').split(',').filter(Boolean);
  return (object) =>
    terms.every((term) => {
      const [key, value] = term.split('=');
      const labels = object.metadata?.labels ?? {};
      return value === undefined ? key in labels : labels[key] === value;
    });
}

/** RFC 7386 JSON merge patch. */
function mergePatch(target: Json, patch: Json): Json {
  const result: Json = { ...target };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else if (typeof value === 'object' && !Array.isArray(value)) result[key] = mergePatch(typeof result[key] === 'object' ? result[key] : {}, value);
    else result[key] = value;
  }
  return result;
}

async function readBody(req: IncomingMessage): Promise<Json | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? (JSON.parse(text) as Json) : undefined;
}
