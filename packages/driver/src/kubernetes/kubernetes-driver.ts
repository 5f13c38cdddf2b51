/**
 * KubernetesDriver: Gantry on a real cluster with the NVIDIA GPU Operator (or the AMD GPU
 * Operator). A thin client: the objects come from the pure builders in specs.ts, this class moves
 * them over the API and waits for the operator to act (mig-manager's `nvidia.com/mig.config.state`,
 * the Device Config Manager's `dcm.amd.com/gpu-config-profile-state`, the persona's GPU resources,
 * evicted pods going away).
 */
import type { KubeConfig, V1Node, V1Pod } from '@kubernetes/client-node';
import { systemClock, type Clock } from '../clock';
import { DriverEventBus } from '../event-bus';
import { assertValidMigLayout, sameMigLayout } from '../shared/mig-layout';
import type {
  BareMetalOperation,
  ClusterDriver,
  DriverEvent,
  GpuMetricSample,
  Inventory,
  InventoryNode,
  JobLogQuery,
  JobLogs,
  MigSliceSpec,
  Persona,
  StartOutcome,
  StartRequest,
  WorkloadStatus,
} from '../types';
import { startEach } from '../shared/start-many';
import { capacityShortfall, externalGpuUseByNode, gpuRequestsOf, isGantryPod } from './gpu-capacity';
import { DCM_TAINT, dcmLayoutsAdvertised, dcmProfileFor, dcmProgress, withDcmProfile, withDcmTaint } from './dcm-config';
import { ClusterView } from './cluster-view';
import { closeConnectionPool, withConnectionPool } from './connection-pool';
import { KubeApi, httpStatusOf, loadClientNode, loadKubeConfig } from './kube-api';
import { KubeEventSource } from './kube-event-source';
import { parseDcgmMetrics } from './dcgm-metrics';
import { parsePodLog } from './pod-log';
import { AMD_GPU_LABELS, GANTRY_ANNOTATIONS, GANTRY_LABELS, GPU_LABELS, gpuVendorOfLabels } from '../shared/labels';
import { migConfigName, migPartedDevices, normalizeMigLayouts, withMigPartedConfig, type MigPartedDeviceConfig } from './mig-config';
import { inventoryNodeFromKubeNode, isNodeReady, migLayoutsOfNode } from './node-inventory';
import { powerPatch, powerStateOfLabels, runPowerHook, type PowerHook } from './power-hook';
import { cordonPatch, dcmProfilePatch, migApplyProgress, migConfigPatch, personaPatch, personaReady } from './node-patches';
import { pollUntil, type PollOutcome } from './poll-until';
import { gpuResourceLimits, isEvictable, isPodFinished, isPodTerminating, jobSelector, replicaPod, workloadStatusFromPods } from './pods';
import { retryOnConflict } from './retry';
import { bareMetalDonePatch, bareMetalStartPatch, bareMetalStepDone, hookPayload, runBareMetalHook, type BareMetalHook } from './bare-metal-hook';
import { fallbackCheckpoint, jobCheckpoint, watchSavedCheckpoints } from './saved-checkpoint';

/** Where mig-manager reads its configs (ClusterPolicy `migManager.config.name`). */
export interface MigPartedConfigMapRef {
  namespace: string;
  name: string;
  /** Default `config.yaml`. */
  key?: string;
}

/** Where the AMD GPU Operator's Device Config Manager reads its profiles (DeviceConfig `configManager.config.name`). */
export interface DcmConfigMapRef {
  namespace: string;
  name: string;
  /** Default `config.json`. */
  key?: string;
}

export interface KubernetesDriverOptions {
  /** A loaded config; otherwise `kubeconfigPath`, otherwise the default chain. */
  kubeConfig?: KubeConfig;
  kubeconfigPath?: string;
  /** Namespace of workload pods. Default `gantry`. */
  namespace?: string;
  /** Image of pods whose request names none. Default: a CUDA base image that sleeps. */
  image?: string;
  /** ConfigMap Gantry writes its named mig-parted configs into; `null` if someone else does. */
  migPartedConfigMap?: MigPartedConfigMapRef | null;
  /** ConfigMap Gantry writes its AMD partition profiles into (the Device Config Manager's); `null` if someone else does. */
  dcmConfigMap?: DcmConfigMapRef | null;
  /** Restricts discovery, e.g. `nvidia.com/gpu.present=true`. Default: every node with GPU labels. */
  nodeLabelSelector?: string;
  /** How often to poll the API while waiting for the operator to act. Default 2 s. (Events come from watches.) */
  pollSeconds?: number;
  /** How long one API call keeps retrying while the API server is unreachable or answers 5xx. Default 30 s. */
  apiRetrySeconds?: number;
  /** Watch reconnect backoff (ms). Default 200 ms doubling to 10 s, with jitter. */
  watchBackoff?: { initialMs: number; maxMs: number };
  migApplyTimeoutSeconds?: number;
  personaTimeoutSeconds?: number;
  drainTimeoutSeconds?: number;
  /**
   * How long suspend waits for the workload to save its checkpoint (`gantry.io/checkpoint-saved`
   * on its pod) after SIGTERM. Default 45 s (the pod's 30 s grace period, and some). Without it in
   * time, suspend returns a reference made from the measured progress.
   */
  checkpointTimeoutSeconds?: number;
  /** Starts in flight at once in startMany(), and API connections kept open. Default 32. */
  startConcurrency?: number;
  /** A dcgm-exporter (or Prometheus federation) `/metrics` URL; metrics() is empty without it. */
  dcgmMetricsUrl?: string;
  /** How setPower() switches machines on and off (a command or a webhook, docs/power.md); none: setPower() fails. */
  powerHook?: PowerHook;
  /** How long a powered-on node may take to be Ready. Default 900 s. */
  powerOnTimeoutSeconds?: number;
  /** Provisioning hook of bare-metal nodes (docs/bare-metal.md): a command or a webhook. */
  bareMetalHook?: BareMetalHook;
  clock?: Clock;
}

export const KUBERNETES_DRIVER_DEFAULTS = {
  namespace: 'gantry',
  image: 'nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04',
  migPartedConfigMap: { namespace: 'gpu-operator', name: 'gantry-mig-parted-config', key: 'config.yaml' },
  dcmConfigMap: { namespace: 'kube-amd-gpu', name: 'config-manager-config', key: 'config.json' },
  pollSeconds: 2,
  migApplyTimeoutSeconds: 900,
  personaTimeoutSeconds: 900,
  drainTimeoutSeconds: 300,
  checkpointTimeoutSeconds: 45,
  startConcurrency: 32,
} as const;

interface ResolvedSettings {
  namespace: string;
  image: string;
  migPartedConfigMap: MigPartedConfigMapRef | null;
  dcmConfigMap: DcmConfigMapRef | null;
  pollMs: number;
  migApplyTimeoutSeconds: number;
  personaTimeoutSeconds: number;
  drainTimeoutSeconds: number;
  checkpointTimeoutSeconds: number;
  startConcurrency: number;
}

/** status() reads the API server, not the cache, this long after the driver deleted a job's pods. */
const CACHE_TRUST_AFTER_DELETE_MS = 10_000;

/** Exit code reported for pods a drain evicted (SIGTERM). */
const EVICTED_EXIT_CODE = 143;

export class KubernetesDriver implements ClusterDriver {
  readonly name = 'kubernetes' as const;

  private readonly api: KubeApi;
  private readonly kubeConfig: KubeConfig;
  private readonly clock: Clock;
  private readonly events = new DriverEventBus();
  private readonly view: ClusterView;
  /** Jobs whose pods this driver deleted, and when: the cache may not show the deletion yet. */
  private readonly deletedAt = new Map<string, number>();
  private eventSource?: KubeEventSource;
  private readonly settings: ResolvedSettings;
  private closed = false;

  constructor(private readonly options: KubernetesDriverOptions = {}) {
    const defaults = KUBERNETES_DRIVER_DEFAULTS;
    // A config of its own (a caller's may be shared), with one keep-alive connection pool.
    this.kubeConfig = withConnectionPool(
      options.kubeConfig ? copyKubeConfig(options.kubeConfig) : loadKubeConfig(options.kubeconfigPath),
      Math.max(16, (options.startConcurrency ?? defaults.startConcurrency) * 2),
    );
    this.api = new KubeApi(this.kubeConfig, {
      retryTimeoutMs: (options.apiRetrySeconds ?? 30) * 1000,
      isClosed: () => this.closed,
    });
    this.clock = options.clock ?? systemClock;
    this.settings = {
      namespace: options.namespace ?? defaults.namespace,
      image: options.image ?? defaults.image,
      migPartedConfigMap: options.migPartedConfigMap === undefined ? defaults.migPartedConfigMap : options.migPartedConfigMap,
      dcmConfigMap: options.dcmConfigMap === undefined ? defaults.dcmConfigMap : options.dcmConfigMap,
      pollMs: (options.pollSeconds ?? defaults.pollSeconds) * 1000,
      migApplyTimeoutSeconds: options.migApplyTimeoutSeconds ?? defaults.migApplyTimeoutSeconds,
      personaTimeoutSeconds: options.personaTimeoutSeconds ?? defaults.personaTimeoutSeconds,
      drainTimeoutSeconds: options.drainTimeoutSeconds ?? defaults.drainTimeoutSeconds,
      checkpointTimeoutSeconds: options.checkpointTimeoutSeconds ?? defaults.checkpointTimeoutSeconds,
      startConcurrency: options.startConcurrency ?? defaults.startConcurrency,
    };
    this.view = new ClusterView({
      api: this.api,
      namespace: this.settings.namespace,
      nodeLabelSelector: options.nodeLabelSelector,
      backoff: options.watchBackoff,
    });
  }

  /** The watches behind onEvent (undefined while nobody listens); tests read their statistics. */
  get watches(): KubeEventSource | undefined {
    return this.eventSource;
  }

  async discover(): Promise<Inventory> {
    const [nodes, pods] = await Promise.all([this.api.listNodes(this.options.nodeLabelSelector), this.api.listActivePods()]);
    const external = externalGpuUseByNode(pods);
    const inventory = nodes.map(inventoryNodeFromKubeNode).filter((n): n is InventoryNode => n !== undefined);
    for (const node of inventory) {
      const use = external.get(node.name);
      if (use) node.externalGpuUse = use;
    }
    return { nodes: inventory };
  }

  /**
   * One node: its object and the pods bound to it (for the GPUs other pods hold), two reads
   * whatever the cluster's size. The discovery selector is not re-checked: a node name comes
   * from an earlier discovery.
   */
  async discoverNode(nodeName: string): Promise<InventoryNode | undefined> {
    const node = await this.api.readNode(nodeName).catch((err: unknown) => {
      if (httpStatusOf(err) === 404) return undefined;
      throw err;
    });
    const inventory = node && inventoryNodeFromKubeNode(node);
    if (!inventory) return undefined;
    const use = externalGpuUseByNode(await this.api.listPodsOnNode(nodeName)).get(nodeName);
    if (use) inventory.externalGpuUse = use;
    return inventory;
  }

  /** From the other-pods watch (no request once it has listed). */
  async gpuUseByOthers(): Promise<Map<string, Record<string, number>>> {
    await this.view.synced();
    return externalGpuUseByNode(this.view.otherPods.list());
  }

  /**
   * Read-modify-write of the node's layouts: the patch carries the resourceVersion it was computed
   * from, so a concurrent change of another GPU's layout (another worker) is never overwritten;
   * on 409 the layouts are read again and merged.
   */
  async applyMigLayout(nodeName: string, gpuIndex: number, layout: MigSliceSpec[]): Promise<void> {
    const asked = await retryOnConflict(`MIG layout of node ${nodeName}`, async () => {
      const node = await this.api.readNode(nodeName);
      const inventory = this.gpuNode(node);
      const gpu = inventory.gpus[gpuIndex];
      if (!gpu) throw new Error(`node ${nodeName} has no GPU ${gpuIndex} (it has ${inventory.gpus.length})`);
      assertValidMigLayout(gpu.model, layout);
      if (gpuVendorOfLabels(node.metadata?.labels) === 'amd') return { amd: true as const };
      const layouts = { ...migLayoutsOfNode(node, gpu.model, inventory.gpus.length), [gpuIndex]: layout };
      const name = migConfigName(layouts);
      if (migApplyProgress(node, name) === 'applied') return undefined;
      await this.publishMigPartedConfig(name, migPartedDevices(layouts, inventory.gpus.length));
      await this.api.patchNode(nodeName, migConfigPatch(name, layouts), node.metadata?.resourceVersion);
      return { name, model: gpu.model, gpuCount: inventory.gpus.length };
    });
    if (asked === undefined) return;
    if ('amd' in asked) return this.applyPartitionMode(nodeName, gpuIndex, layout);
    // Done when mig-manager has applied a config holding this GPU's layout: the one asked for, or
    // a later one that another change of the same node (another GPU) built on top of it.
    const want = migConfigName({ [gpuIndex]: layout });
    await this.waitForNode(nodeName, `MIG config ${asked.name} on node ${nodeName}`, this.settings.migApplyTimeoutSeconds, (n) => {
      const current = migLayoutsOfNode(n, asked.model, asked.gpuCount)[gpuIndex] ?? [];
      if (migConfigName({ [gpuIndex]: current }) !== want) return 'waiting';
      const progress = migApplyProgress(n, n.metadata?.labels?.[GPU_LABELS.migConfig] ?? '');
      if (progress === 'failed') return { failed: 'mig-manager reported nvidia.com/mig.config.state=failed' };
      return progress === 'applied' ? { done: undefined } : 'waiting';
    });
  }

  /**
   * An MI300X's partition mode, through the AMD GPU Operator's Device Config Manager as AMD
   * documents it (docs/accelerators.md): refused while pods hold the node's GPUs (the taint would
   * evict them); a profile that changes this GPU and skips the others is written to DCM's
   * ConfigMap; the node is tainted `amd-dcm=up:NoExecute` and labelled with the profile; done when
   * DCM reports `success` and the device plugin advertises the new partitions. The taint is
   * removed whatever the outcome; on `failure` the recorded layouts are put back.
   */
  private async applyPartitionMode(nodeName: string, gpuIndex: number, layout: MigSliceSpec[]): Promise<void> {
    const asked = await retryOnConflict(`partition mode of node ${nodeName}`, async () => {
      const node = await this.api.readNode(nodeName);
      const inventory = this.gpuNode(node);
      const gpu = inventory.gpus[gpuIndex]!;
      const labels = node.metadata?.labels ?? {};
      if (sameMigLayout(gpu.migLayout, layout) && dcmProgress(labels, labels[AMD_GPU_LABELS.configProfile] ?? '') !== 'waiting') return undefined;
      const busy = (await this.api.listPodsOnNode(nodeName)).filter(
        (p) => !isPodFinished(p) && !isPodTerminating(p) && Object.keys(gpuRequestsOf(p)).some((r) => r.startsWith('amd.com/')),
      );
      if (busy.length) {
        throw new Error(
          `node ${nodeName} cannot change partition mode while pods hold its GPUs (${busy.map((p) => p.metadata?.name).join(', ')}): the Device Config Manager partitions a node tainted ${DCM_TAINT.key}=${DCM_TAINT.value}:${DCM_TAINT.effect}, which would evict them`,
        );
      }
      const { name, profile } = dcmProfileFor(gpu.model, inventory.gpus.length, { [gpuIndex]: layout });
      await this.updateConfigMap(this.settings.dcmConfigMap, 'config.json', (text) => withDcmProfile(text, name, profile));
      const before = Object.fromEntries(inventory.gpus.map((g) => [g.index, g.migLayout]));
      const layouts = { ...before, [gpuIndex]: layout };
      await this.api.patchNode(nodeName, dcmProfilePatch(name, layouts, withDcmTaint(node.spec?.taints, true)), node.metadata?.resourceVersion);
      return { name, layouts, before };
    });
    if (asked === undefined) return;
    try {
      await this.waitForNode(nodeName, `partition profile ${asked.name} on node ${nodeName}`, this.settings.migApplyTimeoutSeconds, (n) => {
        const progress = dcmProgress(n.metadata?.labels, asked.name);
        if (progress === 'failed') {
          return { failed: `the Device Config Manager reported ${AMD_GPU_LABELS.configProfileState}=failure for profile ${asked.name} (its Events say why)` };
        }
        return progress === 'applied' && dcmLayoutsAdvertised(n, asked.layouts) ? { done: undefined } : 'waiting';
      });
    } catch (err) {
      await this.api
        .patchNode(nodeName, { metadata: { annotations: { [GANTRY_ANNOTATIONS.migLayouts]: JSON.stringify(normalizeMigLayouts(asked.before)) } } })
        .catch(() => undefined);
      throw err;
    } finally {
      await retryOnConflict(`taints of node ${nodeName}`, async () => {
        const node = await this.api.readNode(nodeName);
        await this.api.patchNode(nodeName, { spec: { taints: withDcmTaint(node.spec?.taints, false) } }, node.metadata?.resourceVersion);
      }).catch(() => undefined);
    }
  }

  async setPersona(nodeName: string, persona: Persona): Promise<void> {
    await this.api.patchNode(nodeName, personaPatch(persona));
    await this.waitForNode(nodeName, `persona ${persona} on node ${nodeName}`, this.settings.personaTimeoutSeconds, (n) =>
      personaReady(n, persona) ? { done: undefined } : 'waiting',
    );
  }

  /**
   * Power off: refused while Gantry pods run on the node; cordon and label it powering-down, run
   * the power hook, label it off (it stays cordoned). Power on: label powering-up, run the hook,
   * wait for the node to be Ready, then label it on and uncordon it. A failed hook or a node that
   * never gets Ready leaves it labelled off (cordoned) and rejects.
   */
  async setPower(nodeName: string, state: 'on' | 'off'): Promise<void> {
    const node = await this.api.readNode(nodeName);
    const now = powerStateOfLabels(node.metadata?.labels ?? {});
    if (now === state && (state === 'off' || node.spec?.unschedulable !== true)) return;
    if (state === 'off') {
      const busy = (await this.api.listPodsOnNode(nodeName)).filter((p) => isGantryPod(p) && !isPodTerminating(p) && !isPodFinished(p));
      if (busy.length) throw new Error(`node ${nodeName} still runs Gantry pods (${busy.map((p) => p.metadata?.name).join(', ')}): it cannot power off`);
      await this.api.patchNode(nodeName, powerPatch('powering-down'));
      try {
        await runPowerHook(this.options.powerHook, nodeName, 'off');
      } catch (e) {
        await this.api.patchNode(nodeName, powerPatch('on')).catch(() => undefined);
        throw e;
      }
      await this.api.patchNode(nodeName, powerPatch('off'));
      return;
    }
    await this.api.patchNode(nodeName, powerPatch('powering-up'));
    try {
      await runPowerHook(this.options.powerHook, nodeName, 'on');
      await this.waitForNode(nodeName, `node ${nodeName} Ready after power-on`, this.options.powerOnTimeoutSeconds ?? 900, (n) =>
        isNodeReady(n) ? { done: undefined } : 'waiting',
      );
    } catch (e) {
      await this.api.patchNode(nodeName, powerPatch('off')).catch(() => undefined);
      throw e;
    }
    await this.api.patchNode(nodeName, powerPatch('on'));
  }

  /**
   * Bare metal: cordon and label the node (it leaves the schedulable pool), run the provisioning
   * hook, then label the step done; `deprovision` gives the node back (labels gone, uncordoned).
   * A step the node's labels show done already is not run again.
   */
  async bareMetal(nodeName: string, op: BareMetalOperation): Promise<void> {
    const node = await this.api.readNode(nodeName);
    if (bareMetalStepDone(node.metadata?.labels, op)) return;
    await this.api.patchNode(nodeName, bareMetalStartPatch(op));
    if (this.options.bareMetalHook) await runBareMetalHook(this.options.bareMetalHook, hookPayload(nodeName, op));
    await this.api.patchNode(nodeName, bareMetalDonePatch(op));
  }

  async cordon(nodeName: string): Promise<void> {
    await this.api.patchNode(nodeName, cordonPatch(true));
  }

  async uncordon(nodeName: string): Promise<void> {
    await this.api.patchNode(nodeName, cordonPatch(false));
  }

  async drain(nodeName: string): Promise<void> {
    const pods = (await this.api.listPodsOnNode(nodeName)).filter((p) => isEvictable(p) && !isPodTerminating(p));
    const evicted: V1Pod[] = [];
    for (const pod of pods) {
      const ref = { name: pod.metadata!.name!, namespace: pod.metadata!.namespace! };
      if (await this.evictWhenAllowed(ref, nodeName)) evicted.push(pod);
      const jobId = pod.metadata?.labels?.[GANTRY_LABELS.jobId];
      if (jobId) this.deletedAt.set(jobId, Date.now());
    }
    await pollUntil(
      async () => {
        const left = new Set((await this.api.listPodsOnNode(nodeName)).map((p) => p.metadata?.uid));
        return evicted.some((p) => left.has(p.metadata?.uid)) ? 'waiting' : { done: undefined };
      },
      this.pollOptions(`evicted pods to leave node ${nodeName}`, this.settings.drainTimeoutSeconds),
    );
    const jobIds = new Set(evicted.map((p) => p.metadata?.labels?.[GANTRY_LABELS.jobId]));
    for (const jobId of jobIds) {
      if (!jobId) continue;
      this.events.emit({ type: 'job-exited', jobId, exitCode: EVICTED_EXIT_CODE, reason: 'evicted', at: this.clock.now() });
    }
  }

  /**
   * Idempotent: a job whose pods run is left alone, and a retried create finds its pod there.
   * One request per replica in the usual case (the pod, created already bound to its node): what
   * runs and what holds the node's GPUs is read from the informers' caches (with the pods this
   * driver is creating counted from before their create: ClusterView.assume), and whatever the
   * caches had not seen yet shows up as a conflict the API server answers (409: the pod's name is
   * taken), settled then against the API server itself. Pods of an earlier run are deleted and,
   * while they terminate (their names are taken), waited for. A replica that does not fit beside
   * the pods already bound to its node (Gantry's or not) is refused before anything is created.
   */
  async start(req: StartRequest): Promise<void> {
    await this.view.synced();
    const known = this.view.podsOfJob(req.jobId);
    if (known.some((p) => !isPodFinished(p) && !isPodTerminating(p))) return;
    const wanted = req.replicas.map((replica) => ({
      replica,
      pod: replicaPod({
        request: req,
        replica,
        namespace: this.settings.namespace,
        defaultImage: this.settings.image,
        vendor: gpuVendorOfLabels(this.view.node(replica.nodeName)?.metadata?.labels),
      }),
    }));
    if (known.length) {
      // an earlier run's pods (finished, or being deleted): gone before the new ones take their names
      await this.deletePods(known);
      await this.waitUntilGone(req.jobId);
    }
    // counted on their nodes at once, so that a concurrent start on the same node sees them
    for (const { pod } of wanted) this.view.assume(pod);
    let created: boolean[] = [];
    try {
      await this.assertFits(
        req.jobId,
        wanted.map((w) => w.replica),
      );
      created = await Promise.all(wanted.map(({ pod }) => this.api.createPod(pod)));
    } finally {
      // still counted only while a create that went through waits for its watch event
      for (const [i, { pod }] of wanted.entries()) if (!created[i]) this.view.forget(pod);
    }
    if (created.every(Boolean)) return;
    await this.settleNameConflicts(
      req.jobId,
      wanted.map((w) => w.pod).filter((_, i) => !created[i]),
    );
  }

  /** Many starts, at most `startConcurrency` in flight; each request succeeds or fails on its own. */
  startMany(requests: readonly StartRequest[]): Promise<StartOutcome[]> {
    return startEach(requests, this.settings.startConcurrency, (req) => this.start(req));
  }

  /**
   * Creates that found their pod's name taken: by this run (a retried or concurrent start: done),
   * or by a pod of an earlier run the cache had not shown (finished, or terminating): that one is
   * deleted, waited for, and the replica created again.
   */
  private async settleNameConflicts(jobId: string, pods: V1Pod[]): Promise<void> {
    const names = new Set(pods.map((p) => p.metadata!.name!));
    // an earlier run's pod (the only kind that needs work) is long in the API server's watch cache
    const existing = (await this.api.listPods(this.settings.namespace, jobSelector(jobId), true)).filter((p) => names.has(p.metadata?.name ?? ''));
    const stale = existing.filter((p) => isPodFinished(p) || isPodTerminating(p));
    if (stale.length === 0) return;
    await this.deletePods(stale);
    const staleNames = new Set(stale.map((p) => p.metadata!.name!));
    await pollUntil(
      async () => {
        const left = await this.api.listPods(this.settings.namespace, jobSelector(jobId));
        return left.some((p) => staleNames.has(p.metadata?.name ?? '') && (isPodFinished(p) || isPodTerminating(p))) ? 'waiting' : { done: undefined };
      },
      this.pollOptions(`the pods of an earlier run of job ${jobId} to terminate`, this.settings.drainTimeoutSeconds),
    );
    for (const pod of pods.filter((p) => staleNames.has(p.metadata!.name!))) await this.api.createPod(pod);
  }

  async stop(jobId: string): Promise<void> {
    await this.deletePods(await this.jobPods(jobId));
  }

  /**
   * Deletes the job's pods: the workload gets SIGTERM and its grace period to save its checkpoint,
   * which it writes on its pod (`gantry.io/checkpoint-saved`, saved-checkpoint.ts); suspend waits
   * for it (bounded by checkpointTimeoutSeconds). A workload that saves none leaves a reference
   * made from the progress measured before the deletion (job and progress; the workload finds it
   * in GANTRY_CHECKPOINT when started from it).
   */
  async suspend(jobId: string): Promise<{ checkpoint: string; progressSeconds: number }> {
    const pods = await this.jobPods(jobId);
    const status = workloadStatusFromPods(pods, this.clock.now());
    if (status.state !== 'running') throw new Error(`job ${jobId} is not running`);
    const uids = pods.map((p) => p.metadata?.uid).filter((uid): uid is string => uid !== undefined);
    const watch = await watchSavedCheckpoints(this.api, this.settings.namespace, jobId, uids);
    try {
      await this.deletePods(pods);
      const saved = jobCheckpoint(await watch.settled(this.settings.checkpointTimeoutSeconds * 1000));
      if (saved) return saved;
    } finally {
      await watch.stop();
    }
    const progressSeconds = status.progressSeconds;
    return { checkpoint: fallbackCheckpoint(this.settings.namespace, jobId, progressSeconds), progressSeconds };
  }

  /**
   * From the cache while it holds every replica of the job's run; otherwise (nothing seen yet, a
   * replica missing, or not listed yet) from the API server, so `unknown` is never a cache's lag.
   */
  async status(jobId: string): Promise<WorkloadStatus> {
    const deleted = this.deletedAt.get(jobId);
    if (deleted !== undefined && Date.now() - deleted > CACHE_TRUST_AFTER_DELETE_MS) this.deletedAt.delete(jobId);
    if (this.view.gantryPods.hasSynced && !this.deletedAt.has(jobId)) {
      const cached = this.view.podsOfJob(jobId).filter((p) => !isPodTerminating(p));
      const replicas = Number(cached[0]?.spec?.containers?.[0]?.env?.find((e) => e.name === 'GANTRY_REPLICAS')?.value);
      if (cached.length > 0 && cached.length === replicas) return workloadStatusFromPods(cached, this.clock.now(), (p) => this.gpuFaulted(p));
    }
    return workloadStatusFromPods(await this.jobPods(jobId, true), this.clock.now(), (p) => this.gpuFaulted(p));
  }

  private gpuFaulted(pod: V1Pod): boolean {
    return this.eventSource?.gpuFaulted(pod) ?? false;
  }

  /** Events come from watches that run while someone listens (kube-event-source.ts). */
  onEvent(listener: (e: DriverEvent) => void): () => void {
    const unsubscribe = this.events.on(listener);
    if (!this.closed && !this.eventSource) {
      this.eventSource = new KubeEventSource({
        api: this.api,
        view: this.view,
        events: this.events,
        clock: this.clock,
        backoff: this.options.watchBackoff,
      });
      this.eventSource.start();
    }
    return () => {
      unsubscribe();
      if (this.events.listenerCount === 0) void this.stopEventSource();
    };
  }

  /**
   * The job's pods' logs (through the API server, which asks each node's kubelet). A replica whose
   * log cannot be read (not scheduled yet, or no kubelet answered the API server) is named in
   * `unavailable` with the API server's reason, never silently empty.
   */
  async logs(jobId: string, query: JobLogQuery = {}): Promise<JobLogs> {
    const pods = await this.api.listPods(this.settings.namespace, jobSelector(jobId));
    const out: JobLogs = { lines: [], unavailable: [] };
    const sinceSeconds = query.sinceMs === undefined ? undefined : Math.max(1, Math.ceil((this.clock.now() - query.sinceMs) / 1000) + 1);
    await Promise.all(
      pods.map(async (pod) => {
        const replica = Number(pod.metadata?.labels?.[GANTRY_LABELS.replica] ?? 0);
        if (!pod.spec?.nodeName) return void out.unavailable.push({ replica, reason: `pod ${pod.metadata?.name} is not on a node yet` });
        try {
          const text = await this.api.readPodLog(this.settings.namespace, pod.metadata!.name!, { sinceSeconds, tailLines: query.tailLines });
          out.lines.push(...parsePodLog(text, replica).filter((l) => query.sinceMs === undefined || l.at >= query.sinceMs));
        } catch (err) {
          const reason = err instanceof Error ? err.message : String(err);
          out.unavailable.push({
            replica,
            reason: `the API server could not read the log of pod ${pod.metadata?.name} from the kubelet of node ${pod.spec.nodeName}: ${reason.slice(0, 300)}`,
          });
        }
      }),
    );
    out.lines.sort((a, b) => a.at - b.at || a.replica - b.replica || a.seq - b.seq);
    return out;
  }

  async metrics(): Promise<GpuMetricSample[]> {
    const url = this.options.dcgmMetricsUrl;
    if (!url) return [];
    const response = await fetch(url);
    if (!response.ok) throw new Error(`dcgm-exporter ${url} answered ${response.status}`);
    return parseDcgmMetrics(await response.text(), this.clock.now());
  }

  async close(): Promise<void> {
    this.closed = true;
    this.events.clear();
    await this.stopEventSource();
    await this.view.stop();
    closeConnectionPool(this.kubeConfig);
  }

  private async stopEventSource(): Promise<void> {
    const source = this.eventSource;
    this.eventSource = undefined;
    await source?.stop();
  }

  private gpuNode(node: V1Node): InventoryNode {
    const inventory = inventoryNodeFromKubeNode(node);
    if (!inventory) {
      throw new Error(
        `node ${node.metadata?.name} has no GPU discovery labels (nvidia.com/gpu.count and nvidia.com/gpu.product, or amd.com/gpu.product-name and amd.com/gpu resources)`,
      );
    }
    return inventory;
  }

  /** The job's pods, without those being deleted (stopped, suspended, evicted: no longer the job's). */
  /** The job's pods not being deleted; from etcd, or (status reads, every job every reconcile tick) the API server's watch cache. */
  private async jobPods(jobId: string, fromWatchCache = false): Promise<V1Pod[]> {
    return (await this.api.listPods(this.settings.namespace, jobSelector(jobId), fromWatchCache)).filter((p) => !isPodTerminating(p));
  }

  private waitUntilGone(jobId: string): Promise<void> {
    return pollUntil(
      async () => ((await this.api.listPods(this.settings.namespace, jobSelector(jobId))).length ? 'waiting' : { done: undefined }),
      this.pollOptions(`the pods of an earlier run of job ${jobId} to terminate`, this.settings.drainTimeoutSeconds),
    );
  }

  /**
   * Throws when a replica's GPUs do not fit on its node beside the unfinished pods bound there.
   * Pods being deleted (a job stopped or suspended just before) will give their GPUs back once
   * their containers stop, but the kubelet counts them until then and would refuse the new pod:
   * when only they are in the way, this waits until they are gone (bounded by drainTimeoutSeconds).
   */
  private async assertFits(jobId: string, replicas: StartRequest['replicas']): Promise<void> {
    const byNode = new Map<string, StartRequest['replicas']>();
    for (const r of replicas) byNode.set(r.nodeName, [...(byNode.get(r.nodeName) ?? []), r]);
    for (const [nodeName, onNode] of byNode) {
      const wanted: Record<string, number> = {};
      for (const r of onNode) {
        const vendor = gpuVendorOfLabels(this.view.node(nodeName)?.metadata?.labels);
        for (const [resource, amount] of Object.entries(gpuResourceLimits(r.gpus, vendor))) wanted[resource] = (wanted[resource] ?? 0) + Number(amount);
      }
      const shortfalls = (node: V1Node, pods: V1Pod[]) => {
        const others = pods.filter((p) => p.metadata?.labels?.[GANTRY_LABELS.jobId] !== jobId);
        const staying = others.filter((p) => !isPodTerminating(p));
        return { shortfall: capacityShortfall(node, others, wanted), lasting: capacityShortfall(node, staying, wanted) };
      };
      // The node's allocatable from the node watch; what is bound there from the pod watches
      // and the pods this driver is creating (no request: a pod someone else created in the last
      // moment, not in the watch yet, is the kubelet's admission to refuse, as on any cluster).
      const cachedNode = this.view.node(nodeName);
      if (cachedNode && !shortfalls(cachedNode, this.view.activePodsOn(nodeName)).shortfall) continue;
      // Short: ask etcd itself before refusing or waiting.
      const check = async () => {
        const [node, pods] = await Promise.all([this.api.readNode(nodeName), this.api.listPodsOnNode(nodeName)]);
        return { node, ...shortfalls(node, pods) };
      };
      const first = await check();
      if (first.lasting) throw new Error(`job ${jobId} does not fit on node ${nodeName}: ${first.lasting}`);
      if (!first.shortfall) continue;
      await pollUntil(
        async () => {
          const now = await check();
          if (now.lasting) return { failed: now.lasting };
          return now.shortfall ? 'waiting' : { done: undefined };
        },
        this.pollOptions(`terminating pods on node ${nodeName} to free the GPUs job ${jobId} needs`, this.settings.drainTimeoutSeconds),
      );
    }
  }

  private async deletePods(pods: readonly V1Pod[]): Promise<void> {
    const alive = pods.filter((p) => !isPodTerminating(p));
    const now = Date.now();
    for (const [jobId, at] of this.deletedAt) if (now - at > CACHE_TRUST_AFTER_DELETE_MS) this.deletedAt.delete(jobId);
    for (const pod of alive) {
      const jobId = pod.metadata?.labels?.[GANTRY_LABELS.jobId];
      if (jobId) this.deletedAt.set(jobId, now);
    }
    await Promise.all(alive.map((p) => this.api.deletePod(p.metadata!.namespace ?? this.settings.namespace, p.metadata!.name!)));
  }

  /** Evicts a pod, retrying while a PodDisruptionBudget refuses (429); false if it was gone. */
  private evictWhenAllowed(pod: { name: string; namespace: string }, nodeName: string): Promise<boolean> {
    return pollUntil<boolean>(
      async () => {
        try {
          return { done: await this.api.evictPod(pod) };
        } catch (err) {
          if (httpStatusOf(err) === 429) return 'waiting';
          throw err;
        }
      },
      this.pollOptions(`eviction of pod ${pod.namespace}/${pod.name} from node ${nodeName}`, this.settings.drainTimeoutSeconds),
    );
  }

  /** Adds `configName` to mig-manager's config file, keeping the configs already there (updateConfigMap). */
  private publishMigPartedConfig(configName: string, devices: MigPartedDeviceConfig[]): Promise<void> {
    const { loadYaml, dumpYaml } = loadClientNode();
    return this.updateConfigMap(this.settings.migPartedConfigMap, 'config.yaml', (text) =>
      dumpYaml(withMigPartedConfig(text ? loadYaml<unknown>(text) : undefined, configName, devices)),
    );
  }

  /**
   * Rewrites one key of an operator's ConfigMap (`null` ref: someone else writes it), keeping what
   * others wrote: a read-modify-write under the ConfigMap's resourceVersion, again on a fresh read
   * after a 409, so concurrent writers' entries all survive.
   */
  private async updateConfigMap(
    ref: { namespace: string; name: string; key?: string } | null,
    defaultKey: string,
    update: (text: string | undefined) => string,
  ): Promise<void> {
    if (ref === null) return;
    const key = ref.key ?? defaultKey;
    await retryOnConflict(`ConfigMap ${ref.namespace}/${ref.name}`, async () => {
      const existing = await this.api.readConfigMap(ref.namespace, ref.name);
      const data = { ...existing?.data, [key]: update(existing?.data?.[key]) };
      if (existing?.data?.[key] === data[key]) return;
      if (existing) await this.api.replaceConfigMap({ ...existing, data });
      else await this.api.createConfigMap({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: ref.name, namespace: ref.namespace }, data });
    });
  }

  private waitForNode(nodeName: string, what: string, timeoutSeconds: number, check: (node: V1Node) => PollOutcome<void>): Promise<void> {
    return pollUntil(async () => check(await this.api.readNode(nodeName)), this.pollOptions(what, timeoutSeconds));
  }

  private pollOptions(what: string, timeoutSeconds: number) {
    return { what, intervalMs: this.settings.pollMs, timeoutMs: timeoutSeconds * 1000, isClosed: () => this.closed };
  }
}

/** A copy of a KubeConfig (the driver gives its own a connection pool and closes it). */
function copyKubeConfig(config: KubeConfig): KubeConfig {
  const copy = new (loadClientNode().KubeConfig)();
  copy.loadFromString(config.exportConfig());
  return copy;
}
