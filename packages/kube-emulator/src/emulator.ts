/**
 * startEmulator(): makes a Kubernetes API server look like a GPU cluster run by the NVIDIA GPU
 * Operator, from a topology file of the simulated driver. It talks only to the API server:
 *
 *   registrar      Node objects (GPU feature discovery + Topograph labels, capacity), Leases, heartbeats
 *   kubelet        pods bound to its nodes: Pending -> Running -> Succeeded/Failed, graceful deletion
 *   mig-manager    nvidia.com/mig.config -> re-partition -> nvidia.com/mig.config.state
 *   DCM            (AMD) dcm.amd.com/gpu-config-profile -> re-partition -> dcm.amd.com/gpu-config-profile-state
 *   persona switch nvidia.com/gpu.workload.config -> the node's GPU resources
 *   health         injected faults as conditions, taints and Events (control API, injectFault())
 *   burn-in        a burn-in pod's per-GPU findings; a latent GPU defect fails it (kubelet/burn-in-findings.ts)
 *   dcgm-exporter  Prometheus metrics of the GPUs at /metrics
 *
 * Stopping leaves every object in place; a new emulator on the same API server adopts them.
 */
import {
  acceleratorsDemoTopology,
  DEFAULT_SIMULATED_DELAYS,
  demoTopology,
  KUBERNETES_DRIVER_DEFAULTS,
  loadTopologyFile,
  type FaultInjection,
  type Topology,
} from '@gantry/driver';
import type { KubeConfig, V1Node } from '@kubernetes/client-node';
import { emulatedNodesOf, type EmulatedNode } from './cluster/emulated-node';
import { EMULATED_NODES_SELECTOR } from './cluster/node-objects';
import { NodeRegistrar, type RegistrationReport } from './cluster/node-registrar';
import { controlApiHandler } from './control/control-api';
import { listen, type RunningServer } from './control/http-server';
import { HealthReporter } from './health/health-reporter';
import { closeConnectionPool, httpStatusOf, kubeClients, loadKubeConfig, withConnectionPool } from './kube/client';
import { Informer } from './kube/informer';
import { WorkQueue } from './kube/work-queue';
import { Kubelet } from './kubelet/kubelet';
import { dcgmMetricsText, gpuLoads, type GpuUser } from './metrics/dcgm-text';
import { DeviceConfigManager } from './operator/device-config-manager';
import { MigManager } from './operator/mig-manager';
import { PersonaSwitch } from './operator/persona-switch';

/** Real seconds; defaults from the simulated driver's DEFAULT_SIMULATED_DELAYS. */
export interface EmulatorDelays {
  /** Pending -> Running. */
  startSeconds: number;
  /** SIGTERM -> checkpoint saved and exited (capped by the pod's grace period). */
  sigtermSeconds: number;
  migApplySeconds: number;
  personaSwitchSeconds: number;
}

export const DEFAULT_EMULATOR_DELAYS: Readonly<EmulatorDelays> = Object.freeze({
  startSeconds: DEFAULT_SIMULATED_DELAYS.startSeconds,
  sigtermSeconds: DEFAULT_SIMULATED_DELAYS.suspendSeconds,
  migApplySeconds: DEFAULT_SIMULATED_DELAYS.migApplySeconds,
  personaSwitchSeconds: DEFAULT_SIMULATED_DELAYS.personaSwitchSeconds,
});

export interface EmulatorOptions {
  /** A loaded config, else a kubeconfig file, else the default chain (KUBECONFIG...). */
  kubeConfig?: KubeConfig;
  kubeconfigPath?: string;
  /** A topology, a topology file path, or `demo` (the default). */
  topology?: Topology | string;
  /** Divides every delay (the operator's and the kubelet's, not the workloads' durations). Default 1. */
  speed?: number;
  delays?: Partial<EmulatorDelays>;
  /** Lease renewal period, default 10 s (the kubelet's). */
  leaseRenewSeconds?: number;
  /** Ready heartbeat period in node status, default 300 s (the kubelet's nodeStatusReportFrequency; its Lease is the liveness signal). */
  nodeStatusSeconds?: number;
  /** `nvidia.com/gpu.shared` replicas per whole GPU (time-slicing). Default 4; 0 advertises none. */
  sharedReplicasPerGpu?: number;
  /** Where mig-manager reads mig-parted configs. Default: the Kubernetes driver's ConfigMap. */
  migPartedConfigMap?: { namespace: string; name: string; key?: string };
  /** Where the AMD Device Config Manager reads its profiles. Default: the Kubernetes driver's ConfigMap. */
  dcmConfigMap?: { namespace: string; name: string; key?: string };
  /** dcgm-exporter port (0: any free port; null: off). Default 0. */
  metricsPort?: number | null;
  /** Control API port (0: any free port; null: off). Default 0. */
  controlPort?: number | null;
  /** Interface the HTTP servers bind. Default 127.0.0.1. */
  host?: string;
  /** API requests in flight at once. Default 64. */
  concurrency?: number;
  /** Where problems are reported. Default: process warnings. */
  log?: (message: string) => void;
}

export interface Emulator {
  readonly nodes: ReadonlyMap<string, EmulatedNode>;
  readonly registration: RegistrationReport;
  /** `http://host:port/metrics`, when served. */
  readonly metricsUrl?: string;
  /** `http://host:port`, when served. */
  readonly controlUrl?: string;
  injectFault(fault: FaultInjection): Promise<void>;
  /** A GPU reset (gpuIndex) or a node reboot: like the fault `recover`, but a latent defect survives it. */
  repair(nodeName: string, gpuIndex?: number): Promise<void>;
  /** The dcgm-exporter page as it would be served now. */
  metricsText(): string;
  /** Stops watching, timers and servers; leaves the cluster's objects as they are. */
  stop(): Promise<void>;
}

export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const speed = options.speed ?? 1;
  const delays = { ...DEFAULT_EMULATOR_DELAYS, ...options.delays };
  const scaled = (seconds: number) => seconds / speed;
  const log = options.log ?? ((message: string) => process.emitWarning(message));
  const onError = (what: string, err: unknown) => log(`kube-emulator: ${what}: ${(err as Error)?.message ?? String(err)}`);
  const concurrency = options.concurrency ?? 64;
  // Lease renewals and heartbeats have their own share (NodeRegistrarOptions.heartbeatQueue)
  const heartbeatConcurrency = Math.max(1, Math.round(concurrency / 4));
  const sockets = concurrency + heartbeatConcurrency;
  const config = options.kubeConfig ? withConnectionPool(options.kubeConfig, sockets) : loadKubeConfig(options.kubeconfigPath, sockets);
  const clients = kubeClients(config);
  const queue = new WorkQueue(concurrency);
  const heartbeatQueue = new WorkQueue(heartbeatConcurrency);
  const sharedReplicasPerGpu = options.sharedReplicasPerGpu ?? 4;
  const nodes = new Map(emulatedNodesOf(resolveTopology(options.topology)).map((n) => [n.name, n]));

  const registrar = new NodeRegistrar(nodes, {
    clients,
    queue,
    heartbeatQueue,
    sharedReplicasPerGpu,
    leaseDurationSeconds: 40,
    leaseRenewSeconds: options.leaseRenewSeconds ?? 10,
    nodeStatusSeconds: options.nodeStatusSeconds ?? 300,
    onError,
  });
  const kubelet = new Kubelet(nodes, {
    clients,
    queue,
    startSeconds: scaled(delays.startSeconds),
    sigtermSeconds: scaled(delays.sigtermSeconds),
    sharedReplicasPerGpu,
    onError,
  });
  const nodeInformer = new Informer<V1Node>({
    config,
    path: '/api/v1/nodes',
    labelSelector: EMULATED_NODES_SELECTOR,
    list: () => clients.core.listNode({ labelSelector: EMULATED_NODES_SELECTOR }),
    onChange: (event, node) => {
      if (event === 'deleted') return;
      migManager.onNode(node);
      deviceConfigManager.onNode(node);
      personaSwitch.onNode(node);
    },
    onError: (err) => onError('watching nodes', err),
  });
  const latest = (name: string) => nodeInformer.cache.get(`/${name}`);
  const { namespace, name, key } = options.migPartedConfigMap ?? KUBERNETES_DRIVER_DEFAULTS.migPartedConfigMap;
  const migManager = new MigManager(nodes, latest, {
    clients,
    registrar,
    kubelet,
    configMap: { namespace, name, key: key ?? 'config.yaml' },
    applySeconds: scaled(delays.migApplySeconds),
    onError,
  });
  const dcmRef = options.dcmConfigMap ?? KUBERNETES_DRIVER_DEFAULTS.dcmConfigMap;
  const deviceConfigManager = new DeviceConfigManager(nodes, latest, {
    clients,
    queue,
    registrar,
    kubelet,
    configMap: { namespace: dcmRef.namespace, name: dcmRef.name, key: dcmRef.key ?? 'config.json' },
    applySeconds: scaled(delays.migApplySeconds),
    onError,
  });
  const personaSwitch = new PersonaSwitch(nodes, { registrar, switchSeconds: scaled(delays.personaSwitchSeconds), onError });
  const health = new HealthReporter(nodes, { clients, queue, registrar, kubelet, latest });

  const servers: RunningServer[] = [];
  const stopAll = async () => {
    registrar.stop();
    kubelet.stop();
    nodeInformer.stop();
    migManager.stop();
    deviceConfigManager.stop();
    personaSwitch.stop();
    await Promise.all(servers.map((s) => s.close()));
    closeConnectionPool(config);
  };

  try {
    // The GPU Operator's namespace, where mig-manager's config file lives.
    await ensureNamespace(clients, namespace);
    // The AMD GPU Operator's, where the Device Config Manager's profiles live.
    if (dcmRef.namespace !== namespace) await ensureNamespace(clients, dcmRef.namespace);
    const registration = await registrar.register();
    // Adopted nodes: capacity and Ready as the hardware state the previous run left says.
    await Promise.all(
      registration.adoptedNodes
        .map((name) => nodes.get(name)!)
        .filter((n) => !n.down)
        .map((n) => registrar.publishStatus(n).catch((err) => onError(`publishing node ${n.name}`, err))),
    );
    await Promise.all(registration.adoptedNodes.map((name) => health.syncTaints(nodes.get(name)!).catch((err) => onError(`tainting node ${name}`, err))));
    await kubelet.start();
    await nodeInformer.start();
    registrar.startHeartbeats();

    const metricsText = () => {
      const users = new Map<string, GpuUser[]>();
      for (const node of nodes.values()) {
        const list: GpuUser[] = [];
        for (const [uid, allocation] of kubelet.devices.allocations(node.name)) {
          const pod = kubelet.podByUid(uid);
          list.push({
            namespace: pod?.metadata?.namespace ?? '',
            pod: pod?.metadata?.name ?? '',
            container: pod?.spec?.containers?.[0]?.name ?? '',
            resources: allocation.resources,
            gpuIndexes: allocation.gpuIndexes,
          });
        }
        users.set(node.name, list);
      }
      return dcgmMetricsText(
        [...nodes.values()].map((node) => ({ node, loads: gpuLoads(node, users.get(node.name) ?? [], sharedReplicasPerGpu) })),
        Date.now(),
      );
    };
    const host = options.host ?? '127.0.0.1';
    const injectFault = (fault: FaultInjection) => health.inject(fault);
    const repair = (nodeName: string, gpuIndex?: number) => health.repair(nodeName, gpuIndex);
    let metricsUrl: string | undefined;
    let controlUrl: string | undefined;
    if (options.metricsPort !== null) {
      const server = await listen(options.metricsPort ?? 0, host, (req, res) => {
        if (req.method === 'GET' && new URL(req.url ?? '/', 'http://x').pathname === '/metrics') {
          res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
          return void res.end(metricsText());
        }
        res.writeHead(404);
        res.end();
      });
      servers.push(server);
      metricsUrl = `${server.url}/metrics`;
    }
    if (options.controlPort !== null) {
      const server = await listen(options.controlPort ?? 0, host, controlApiHandler({ nodes, injectFault, repair }));
      servers.push(server);
      controlUrl = server.url;
    }
    let stopped: Promise<void> | undefined;
    return { nodes, registration, metricsUrl, controlUrl, injectFault, repair, metricsText, stop: () => (stopped ??= stopAll()) };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

async function ensureNamespace(clients: ReturnType<typeof kubeClients>, name: string): Promise<void> {
  try {
    await clients.core.createNamespace({ body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  } catch (err) {
    if (httpStatusOf(err) !== 409) throw err;
  }
}

function resolveTopology(topology: Topology | string | undefined): Topology {
  if (topology === undefined || topology === 'demo') return demoTopology();
  if (topology === 'demo-accelerators') return acceleratorsDemoTopology();
  if (typeof topology === 'string') return loadTopologyFile(topology);
  return topology;
}
