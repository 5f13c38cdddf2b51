/**
 * SimulatedDriver: an in-process GPU cluster built from a topology, with realistic delays
 * (MIG apply, persona switch, job start, checkpoint) scaled by a speed factor, telemetry that
 * follows what runs, and injectable faults. No GPU, no Kubernetes.
 *
 * Time: a simulated second lasts 1 / speed real seconds; a running job makes `speed` seconds of
 * progress per real second. Every timer is unref()'d and close() clears them all.
 */
import { systemClock, type Clock } from '../clock';
import { DriverEventBus } from '../event-bus';
import type {
  BareMetalNodeStatus,
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
import { startEach } from '../shared/start-many';
import { SimCluster, type SimGpu, type SimNode } from './cluster-state';
import { demoTopology } from './generate-topology';
import { assertValidMigLayout, sameMigLayout } from '../shared/mig-layout';
import { resolveReplicaClaims } from './replica-claims';
import { SimTimers } from './sim-timers';
import { gpuLoads, gpuSamples } from './telemetry';
import type { Topology } from './topology';
import { SIM_EXIT_CODES, SimWorkloads, type WorkloadScript } from './workloads';
import type { GpuClaim } from './gpu-claims';
import { BURN_IN_KIND, formatBurnInFindings, type BurnInFinding } from '../shared/burn-in';
import { DEFAULT_FAULT_XID, xidEffect } from '../shared/xid';

/** Durations in simulated seconds; 0 completes on the next tick (benchmarks). */
export interface SimulatedDelays {
  migApplySeconds: number;
  personaSwitchSeconds: number;
  /** Container start when the node must first pull the workload's image. */
  startSeconds: number;
  /**
   * Container start when the node already holds the image (containerd skips the pull, as with
   * imagePullPolicy IfNotPresent): creating the sandbox and the container only.
   */
  cachedImageStartSeconds: number;
  /** Extra start time of an `inference` workload: loading the model's weights onto the GPU. */
  modelLoadSeconds: number;
  suspendSeconds: number;
  /** Wall-clock seconds between heartbeats (not scaled by the speed). */
  heartbeatSeconds: number;
  /** GPU reset (remediation). */
  gpuResetSeconds: number;
  /** Node reboot (remediation). */
  rebootSeconds: number;
  /** Power-on to ready (power management). */
  bootSeconds: number;
  /** Shutdown to off (power management). */
  shutdownSeconds: number;
  /** Bare metal: write the image and boot the node. */
  bareMetalProvisionSeconds: number;
  /** Bare metal: power off or on through the BMC (the disk is kept). */
  bareMetalPowerSeconds: number;
  /** Bare metal: wipe the disk and give the node back to the pool. */
  bareMetalWipeSeconds: number;
  /** Seconds of load after which a latent GPU fault shows as Xid 79 under ordinary work. */
  latentFaultSeconds: number;
}

export const DEFAULT_SIMULATED_DELAYS: Readonly<SimulatedDelays> = {
  migApplySeconds: 5,
  personaSwitchSeconds: 240,
  startSeconds: 1,
  cachedImageStartSeconds: 0.4,
  modelLoadSeconds: 3,
  suspendSeconds: 2,
  heartbeatSeconds: 5,
  gpuResetSeconds: 30,
  rebootSeconds: 180,
  bootSeconds: 300,
  shutdownSeconds: 60,
  bareMetalProvisionSeconds: 300,
  bareMetalPowerSeconds: 30,
  bareMetalWipeSeconds: 180,
  latentFaultSeconds: 120,
};

/** Each bare-metal step: the node's status while it runs, after it (null: back in the pool), and its delay. */
const BARE_METAL_STEPS: Record<BareMetalOperation['action'], [BareMetalNodeStatus, BareMetalNodeStatus | null, keyof SimulatedDelays]> = {
  provision: ['provisioning', 'deployed', 'bareMetalProvisionSeconds'],
  'power-off': ['powering-off', 'powered-off', 'bareMetalPowerSeconds'],
  'power-on': ['powering-on', 'deployed', 'bareMetalPowerSeconds'],
  deprovision: ['deprovisioning', null, 'bareMetalWipeSeconds'],
};

/** Share of a burn-in's length after which its stress test finds a latent fault. */
const BURN_IN_FINDS_LATENT_AT = 0.4;

export interface SimulatedDriverOptions {
  /** Default: demoTopology(). */
  topology?: Topology;
  /** Simulated seconds per real second. Default 1. */
  speed?: number;
  delays?: Partial<SimulatedDelays>;
  /** Emit a `heartbeat` event naming every up node each heartbeatSeconds. Default false (quiet tests). */
  heartbeats?: boolean;
  clock?: Clock;
}

export class SimulatedDriver implements ClusterDriver {
  readonly name = 'simulated' as const;
  readonly speed: number;
  readonly delays: Readonly<SimulatedDelays>;

  private readonly cluster: SimCluster;
  private readonly clock: Clock;
  private readonly timers: SimTimers;
  private readonly events = new DriverEventBus();
  private readonly workloads: SimWorkloads;
  /** In-flight MIG changes (key node/gpu) and persona switches (key node), for idempotent retries. */
  private readonly migChanges = new Map<string, { layout: MigSliceSpec[]; done: Promise<void> }>();
  private readonly personaSwitches = new Map<string, { persona: Persona; done: Promise<void> }>();
  /** Power changes in flight (key node), for idempotent retries. */
  private readonly powerChanges = new Map<string, { state: 'on' | 'off'; done: Promise<void> }>();
  private readonly bareMetalNodes = new Map<string, BareMetalNodeStatus>();
  private readonly bareMetalSteps = new Map<string, { action: BareMetalOperation['action']; done: Promise<void> }>();
  /** Images each node holds (key: node name): pulled by the first start of a workload using them. */
  private readonly images = new Map<string, Set<string>>();

  constructor(options: SimulatedDriverOptions = {}) {
    this.speed = options.speed ?? 1;
    const delays = { ...DEFAULT_SIMULATED_DELAYS, ...options.delays };
    // a cached image never starts slower than a pull (benchmarks that set startSeconds to 0)
    if (options.delays?.cachedImageStartSeconds === undefined) delays.cachedImageStartSeconds = Math.min(delays.cachedImageStartSeconds, delays.startSeconds);
    this.delays = delays;
    this.clock = options.clock ?? systemClock;
    this.timers = new SimTimers(this.speed);
    this.cluster = new SimCluster(options.topology ?? demoTopology());
    this.workloads = new SimWorkloads({
      clock: this.clock,
      timers: this.timers,
      speed: this.speed,
      delays: this.delays,
      onExit: (jobId, exitCode, reason) => this.emit({ type: 'job-exited', jobId, exitCode, reason }),
    });
    // Heartbeats are a liveness signal read against the wall clock (the health monitor's grace is
    // real seconds): they do not speed up with the simulation (at speed 20, 10,000 nodes beating
    // every 5 simulated seconds sent 40,000 names a second to each worker).
    if (options.heartbeats) this.timers.everyWallClock(this.delays.heartbeatSeconds, () => this.beat());
  }

  async discover(): Promise<Inventory> {
    return this.cluster.inventory();
  }

  async discoverNode(nodeName: string): Promise<InventoryNode | undefined> {
    return this.cluster.inventoryOf(nodeName);
  }

  async applyMigLayout(nodeName: string, gpuIndex: number, layout: MigSliceSpec[]): Promise<void> {
    const node = this.cluster.upNode(nodeName);
    const gpu = this.cluster.gpu(node, gpuIndex);
    if (node.persona === 'vm-passthrough') {
      throw new Error(`node ${nodeName} runs the vm-passthrough persona: its GPUs go whole to VMs, MIG does not apply`);
    }
    assertValidMigLayout(gpu.model, layout);
    const key = `${nodeName}/${gpuIndex}`;
    const inFlight = this.migChanges.get(key);
    if (inFlight) {
      if (sameMigLayout(inFlight.layout, layout)) return inFlight.done;
      throw new Error(`a MIG change is already in progress on GPU ${gpuIndex} of node ${nodeName}`);
    }
    if (sameMigLayout(gpu.migLayout, layout)) return;
    this.assertMigSlicesIdle(node, gpu, layout);
    const done = this.timers
      .sleep(this.delays.migApplySeconds)
      .then(() => {
        if (node.down) throw new Error(`node ${nodeName} went down while its MIG layout was being applied`);
        gpu.migLayout = [...layout].sort((a, b) => a.start - b.start);
      })
      .finally(() => this.migChanges.delete(key));
    this.migChanges.set(key, { layout, done });
    return done;
  }

  async setPersona(nodeName: string, persona: Persona): Promise<void> {
    const node = this.cluster.upNode(nodeName);
    const inFlight = this.personaSwitches.get(nodeName);
    if (inFlight) {
      if (inFlight.persona === persona) return inFlight.done;
      throw new Error(`node ${nodeName} is already switching to persona ${inFlight.persona}`);
    }
    if (node.persona === persona) return;
    const jobs = this.workloads.jobsOn(nodeName);
    if (jobs.length > 0) throw new Error(`node ${nodeName} still runs jobs ${jobs.join(', ')}: drain it before switching persona`);
    node.switchingPersona = true;
    const done = this.timers
      .sleep(this.delays.personaSwitchSeconds)
      .then(() => {
        if (node.down) throw new Error(`node ${nodeName} went down while switching persona`);
        node.persona = persona;
      })
      .finally(() => {
        node.switchingPersona = false;
        this.personaSwitches.delete(nodeName);
      });
    this.personaSwitches.set(nodeName, { persona, done });
    return done;
  }

  /**
   * Powers a node off (refused while it runs jobs; cordoned first) after shutdownSeconds, or on
   * after bootSeconds. A `power-up-fail` fault makes the next power-on fail: the node stays off.
   */
  async setPower(nodeName: string, state: 'on' | 'off'): Promise<void> {
    const node = this.cluster.node(nodeName);
    const inFlight = this.powerChanges.get(nodeName);
    if (inFlight) {
      if (inFlight.state === state) return inFlight.done;
      throw new Error(`node ${nodeName} is already ${node.power}`);
    }
    if (node.power === state) return;
    if (state === 'off') {
      const jobs = this.workloads.jobsOn(nodeName);
      if (jobs.length > 0) throw new Error(`node ${nodeName} still runs jobs ${jobs.join(', ')}: it cannot power off`);
      node.unschedulable = true;
    }
    node.power = state === 'off' ? 'powering-down' : 'powering-up';
    const done = this.timers
      .sleep(state === 'off' ? this.delays.shutdownSeconds : this.delays.bootSeconds)
      .then(() => {
        if (state === 'off') {
          node.power = 'off';
          return;
        }
        if (node.powerUpFails) {
          node.powerUpFails = false;
          node.power = 'off';
          throw new Error(`node ${nodeName} did not come up after power-on (BMC reports no POST)`);
        }
        node.power = 'on';
        node.unschedulable = false;
      })
      .finally(() => this.powerChanges.delete(nodeName));
    this.powerChanges.set(nodeName, { state, done });
    return done;
  }

  async cordon(nodeName: string): Promise<void> {
    this.cluster.node(nodeName).unschedulable = true;
  }

  async uncordon(nodeName: string): Promise<void> {
    this.cluster.node(nodeName).unschedulable = false;
  }

  async drain(nodeName: string): Promise<void> {
    const node = this.cluster.node(nodeName);
    for (const jobId of this.workloads.jobsOn(node.name)) {
      this.workloads.kill(jobId, SIM_EXIT_CODES.evicted, 'evicted');
    }
  }

  async start(req: StartRequest): Promise<void> {
    if (this.workloads.isActive(req.jobId)) return;
    const claims = resolveReplicaClaims(this.cluster, req, (nodeName) => this.workloads.heldClaimsOn(nodeName));
    const latent = claims.filter((c) => this.cluster.gpu(this.cluster.node(c.nodeName), c.gpuIndex).latentFault);
    const startSeconds = this.containerStartSeconds(req, claims);
    if (req.kind === BURN_IN_KIND) return this.workloads.start(req, claims, this.burnInScript(req, claims, latent), startSeconds);
    this.workloads.start(req, claims, undefined, startSeconds);
    // Under load a latent defect shows: the GPU falls off the bus while the job runs on it.
    for (const c of latent) {
      this.timers.after(this.delays.startSeconds + this.delays.latentFaultSeconds, () => {
        if (this.workloads.jobsOn(c.nodeName, c.gpuIndex).includes(req.jobId))
          this.injectXid(this.cluster.node(c.nodeName), { nodeName: c.nodeName, kind: 'xid', gpuIndex: c.gpuIndex, xid: 79 });
      });
    }
  }

  /**
   * The container start of a workload: cachedImageStartSeconds when every node it lands on holds
   * its image (its `image`, else the default image of its kind), startSeconds when one must pull
   * it first; the nodes hold the image from then on (an image pull survives the workload).
   */
  private containerStartSeconds(req: StartRequest, claims: GpuClaim[]): number {
    const image = req.image ?? `default-${req.kind}`;
    const nodes = [...new Set(claims.map((c) => c.nodeName))];
    const cached = nodes.length > 0 && nodes.every((n) => this.images.get(n)?.has(image));
    for (const n of nodes) {
      const held = this.images.get(n) ?? new Set<string>();
      held.add(image);
      this.images.set(n, held);
    }
    return cached ? this.delays.cachedImageStartSeconds : this.delays.startSeconds;
  }

  /** A burn-in passes on sound GPUs; its stress phase fails the GPUs with a latent fault. */
  private burnInScript(req: StartRequest, claims: GpuClaim[], latent: GpuClaim[]): WorkloadScript {
    const bad = new Set(latent.map((c) => `${c.nodeName}/${c.gpuIndex}`));
    const findings = (failed: boolean): BurnInFinding[] =>
      claims.map((c) =>
        failed && bad.has(`${c.nodeName}/${c.gpuIndex}`)
          ? { gpuIndex: c.gpuIndex, result: 'fail', detail: 'targeted_stress: GPU fell off the bus under load (Xid 79); idle checks had passed' }
          : { gpuIndex: c.gpuIndex, result: 'pass', detail: 'all tests passed' },
      );
    const script: WorkloadScript = { passMessage: formatBurnInFindings(findings(false)) };
    if (latent.length) {
      script.failAtSeconds = (req.durationSeconds ?? 0) * BURN_IN_FINDS_LATENT_AT;
      script.failMessage = formatBurnInFindings(findings(true));
    }
    return script;
  }

  /** In memory: one after the other, each on the claims the ones before it left. */
  startMany(requests: readonly StartRequest[]): Promise<StartOutcome[]> {
    return startEach(requests, 1, (req) => this.start(req));
  }

  async stop(jobId: string): Promise<void> {
    this.workloads.stop(jobId);
  }

  async suspend(jobId: string): Promise<{ checkpoint: string; progressSeconds: number }> {
    return this.workloads.suspend(jobId);
  }

  async status(jobId: string): Promise<WorkloadStatus> {
    return this.workloads.status(jobId);
  }

  async statusMany(jobIds: readonly string[]): Promise<WorkloadStatus[]> {
    return jobIds.map((id) => this.workloads.status(id));
  }

  /** Wakes at the workload's own transition (end of container start and model load), not at a poll. */
  async untilStarted(jobId: string, timeoutMs: number): Promise<WorkloadStatus> {
    await this.workloads.settled(jobId, timeoutMs);
    return this.workloads.status(jobId);
  }

  onEvent(listener: (e: DriverEvent) => void): () => void {
    return this.events.on(listener);
  }

  /** Generated from the workload's own progress and runs (job-log.ts); kept after the job ends. */
  async logs(jobId: string, query?: JobLogQuery): Promise<JobLogs> {
    return this.workloads.logs(jobId, query);
  }

  async logsMany(requests: readonly JobLogRequest[]): Promise<JobLogs[]> {
    return requests.map((r) => this.workloads.logs(r.jobId, r.query));
  }

  async metrics(): Promise<GpuMetricSample[]> {
    const loads = gpuLoads(this.workloads.runningClaims(), (claim) => {
      const node = this.cluster.node(claim.nodeName);
      return this.cluster.gpu(node, claim.gpuIndex).model;
    });
    return gpuSamples(this.cluster.all(), loads, this.clock.now());
  }

  /**
   * Fakes a hardware fault. `xid`: emits the Xid; a critical one marks the GPU unhealthy and a
   * process-fatal one ends the job on it. `nic-down`: emits nic-down. `node-down`: emits
   * node-down, stops the node's heartbeats and ends its jobs (exit 137). `latent`: a defect only load
   * shows (burn-in fails, other work gets Xid 79 after latentFaultSeconds). `recover`: brings the
   * node, its NIC and its GPUs (or only `gpuIndex`) back, emitting node-up / nic-up.
   * `power-up-fail`: the node's next power-on fails (it stays off).
   */
  async injectFault(fault: FaultInjection): Promise<void> {
    const node = this.cluster.node(fault.nodeName);
    switch (fault.kind) {
      case 'xid':
        return this.injectXid(node, fault);
      case 'nic-down':
        node.nicDown = true;
        this.emit({ type: 'nic-down', nodeName: node.name });
        return;
      case 'node-down':
        if (node.down) return;
        node.down = true;
        this.emit({ type: 'node-down', nodeName: node.name });
        for (const jobId of this.workloads.jobsOn(node.name)) {
          this.workloads.kill(jobId, SIM_EXIT_CODES.nodeLost, 'node-lost');
        }
        return;
      case 'recover':
        return this.recover(node, fault.gpuIndex, { partsReplaced: true });
      case 'latent':
        if (fault.gpuIndex === undefined) throw new Error('a latent fault needs gpuIndex');
        this.cluster.gpu(node, fault.gpuIndex).latentFault = true;
        return;
      case 'power-up-fail':
        node.powerUpFails = true;
        return;
    }
  }

  /**
   * Resets a GPU: refused while a job runs on it; after gpuResetSeconds the GPU is healthy again
   * unless its node is down (a reset cannot bring back a node that is gone).
   */
  async resetGpu(nodeName: string, gpuIndex: number): Promise<void> {
    const node = this.cluster.upNode(nodeName);
    const gpu = this.cluster.gpu(node, gpuIndex);
    const jobs = this.workloads.jobsOn(nodeName, gpuIndex);
    if (jobs.length > 0) throw new Error(`GPU ${gpuIndex} of node ${nodeName} still runs jobs ${jobs.join(', ')}: drain it before a reset`);
    await this.timers.sleep(this.delays.gpuResetSeconds);
    if (!node.down) gpu.healthy = true;
  }

  /**
   * Reboots a node through its BMC (works on a node that is down): its jobs end (exit 137),
   * after rebootSeconds the node, its NIC and its GPUs are back. MIG layouts are kept, as
   * mig-manager re-applies the configured layout at boot.
   */
  async rebootNode(nodeName: string): Promise<void> {
    const node = this.cluster.node(nodeName);
    for (const jobId of this.workloads.jobsOn(node.name)) this.workloads.kill(jobId, SIM_EXIT_CODES.nodeLost, 'node-lost');
    node.down = true;
    await this.timers.sleep(this.delays.rebootSeconds);
    this.recover(node, undefined, { partsReplaced: false });
  }

  /**
   * Bare metal: the node is cordoned for its whole lease; each step takes its simulated time.
   * A step asked again while it runs waits for the same end; a done step is not redone.
   */
  async bareMetal(nodeName: string, op: BareMetalOperation): Promise<void> {
    const node = this.cluster.node(nodeName);
    const running = this.bareMetalSteps.get(nodeName);
    if (running?.action === op.action) return running.done;
    if (running) await running.done.catch(() => undefined);
    const [during, after, seconds] = BARE_METAL_STEPS[op.action];
    const now = this.bareMetalNodes.get(nodeName);
    if (now === after || (op.action === 'deprovision' && now === undefined)) return;
    const jobs = this.workloads.jobsOn(nodeName);
    if (op.action === 'provision' && jobs.length > 0)
      throw new Error(`node ${nodeName} still runs jobs ${jobs.join(', ')}: it must be idle to become bare metal`);
    node.unschedulable = true;
    this.bareMetalNodes.set(nodeName, during);
    const done = this.timers
      .sleep(this.delays[seconds])
      .then(() => {
        if (after === null) {
          this.bareMetalNodes.delete(nodeName);
          node.unschedulable = false;
        } else this.bareMetalNodes.set(nodeName, after);
      })
      .finally(() => this.bareMetalSteps.delete(nodeName));
    this.bareMetalSteps.set(nodeName, { action: op.action, done });
    return done;
  }

  /** The bare-metal state of each node that is not in the pool (tests, docs). */
  bareMetalStatus(): Map<string, BareMetalNodeStatus> {
    return new Map(this.bareMetalNodes);
  }

  async close(): Promise<void> {
    this.timers.clear();
    this.events.clear();
  }

  private injectXid(node: SimNode, fault: FaultInjection): void {
    if (fault.gpuIndex === undefined) throw new Error('an xid fault needs gpuIndex');
    const gpu = this.cluster.gpu(node, fault.gpuIndex);
    const xid = fault.xid ?? DEFAULT_FAULT_XID;
    const effect = xidEffect(xid);
    this.emit({ type: 'xid', nodeName: node.name, gpuIndex: gpu.index, xid });
    if (effect.gpuUnhealthy) gpu.healthy = false;
    if (!effect.killsProcesses) return;
    for (const jobId of this.workloads.jobsOn(node.name, gpu.index)) {
      this.workloads.kill(jobId, SIM_EXIT_CODES.gpuFault, 'gpu-fault');
    }
  }

  /** A reboot brings the node back with its latent defects; an injected `recover` replaced the parts. */
  private recover(node: SimNode, gpuIndex: number | undefined, o: { partsReplaced: boolean }): void {
    const gpus = gpuIndex === undefined ? node.gpus : [this.cluster.gpu(node, gpuIndex)];
    for (const gpu of gpus) {
      gpu.healthy = true;
      if (o.partsReplaced) gpu.latentFault = false;
    }
    if (node.down) {
      node.down = false;
      this.emit({ type: 'node-up', nodeName: node.name });
    }
    if (node.nicDown) {
      node.nicDown = false;
      this.emit({ type: 'nic-up', nodeName: node.name });
    }
  }

  /** A GPU instance can be destroyed only when idle (docs/reference/gpu.md, MIG rule 6). */
  private assertMigSlicesIdle(node: SimNode, gpu: SimGpu, layout: readonly MigSliceSpec[]): void {
    const kept = (profile: string, start: number) => layout.some((s) => s.profile === profile && s.start === start);
    for (const claim of this.workloads.heldClaimsOn(node.name)) {
      if (claim.gpuIndex !== gpu.index) continue;
      if (claim.kind !== 'mig' || !kept(claim.profile, claim.start)) {
        throw new Error(`GPU ${gpu.index} of node ${node.name} is in use by job ${claim.jobId}: stop it before changing the MIG layout`);
      }
    }
  }

  /** One heartbeat event naming every node that is up and powered on. */
  private beat(): void {
    const nodeNames = this.cluster
      .all()
      .filter((node) => !node.down && node.power === 'on')
      .map((node) => node.name);
    if (nodeNames.length) this.emit({ type: 'heartbeat', nodeNames });
  }

  private emit(event: DistributiveOmit<DriverEvent, 'at'>): void {
    this.events.emit({ ...event, at: this.clock.now() } as DriverEvent);
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
