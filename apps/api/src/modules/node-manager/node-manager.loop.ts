import { Inject, Injectable, Logger, OnApplicationBootstrap, BeforeApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { QueuesService } from '../../queues/queues.service';
import type { NodeRow } from '../cluster/cluster.repository';
import { ClusterSnapshotStore } from '../cluster/cluster-snapshot.store';
import { personaToApi, powerToApi } from '../cluster/cluster.presenter';
import { buildSnapshot } from '../cluster/snapshot';
import { perRow } from '../cluster/per-row';
import { planPersonas, vmDemandOf, type MigInFlight, type PersonaNode } from './demand-planning';
import { planMigChanges } from './mig-planning';
import { MigManagerService } from './mig-manager.service';
import { NodesRepository } from './nodes.repository';
import { IncidentsRepository } from './incidents.repository';
import { MigChangesRepository } from './mig-changes.repository';
import { DemandRepository } from './demand.repository';
import { PowerRepository } from './power.repository';
import { planPower, queuedReplicasOf, type PowerNode } from './power-planning';

type NodeRows = NodeRow[];
type PendingRows = Awaited<ReturnType<DemandRepository['unplacedPendingJobs']>>;
type PendingDemandRows = { kind: string; replicas: number; resources: unknown }[];

/** Hysteresis of both planners, in simulated seconds (10 minutes of cluster time). */
export const PLAN_HOLD_SIM_SECONDS = 600;

/** A change in flight with no queue job for this long is re-enqueued (its job was lost). */
export const ORPHAN_AFTER_MS = 5000;

/**
 * A cycle's request for a planning round (planSoon) about work the last round already planned for
 * waits until this long after that round: at 10,000 nodes a round costs tens of milliseconds of
 * the worker's CPU, and cycles that leave the same MIG work waiting follow each other every few
 * hundred milliseconds while its changes are applied. Work not seen by the last round is planned at once.
 */
export const REPLAN_AFTER_MS = 1000;

/**
 * The node manager's planning loop (worker): every GANTRY_RECONCILE_SECONDS it reads the queue's
 * demand and proposes MIG re-partitions (the engine's MIG planner) and persona switches (look
 * ahead for VM jobs), each as a deduplicated queue job. At boot it resumes changes in flight.
 */
@Injectable()
export class NodeManagerLoop implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('node-manager');
  private timer?: NodeJS.Timeout;
  private running = false;
  private again = false;
  /** Pending work a scheduling cycle just failed to place for want of a MIG slice (see planSoon). */
  private waitingForMig = new Set<string>();
  /** The waiting work the last planning round saw, and when it started (see REPLAN_AFTER_MS). */
  private plannedFor = new Set<string>();
  private lastRoundMs = -Infinity;
  private replan?: NodeJS.Timeout;

  constructor(
    private readonly nodes: NodesRepository,
    private readonly incidents: IncidentsRepository,
    private readonly migChanges: MigChangesRepository,
    private readonly demand: DemandRepository,
    private readonly snapshots: ClusterSnapshotStore,
    private readonly mig: MigManagerService,
    private readonly queues: QueuesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly power: PowerRepository,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // After a restart: MIG changes, persona switches, drains and remediations pick up where they were.
    await this.rederive(new Date(), { afterRestart: true }).catch((e: unknown) => this.logger.warn(`resume: ${String(e)}`));
    this.timer = setInterval(() => void this.tick(), this.config.reconcileSeconds * 1000);
    this.timer.unref?.();
  }

  beforeApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.replan) clearTimeout(this.replan);
  }

  private get holdMs() {
    return (PLAN_HOLD_SIM_SECONDS / this.config.driver.simSpeed) * 1000;
  }

  /**
   * A scheduling cycle left work waiting for a MIG slice no GPU has free: plan now rather than
   * at the next tick (a free GPU is re-partitioned at once). Folded into a round that runs.
   * `waiting`: the ids of that work, counted as tried by a cycle even before the cycle has
   * written its reasons (it calls this before its preemption and explanation steps).
   */
  planSoon(waiting: readonly string[] = [], nowMs = Date.now()): void {
    for (const id of waiting) this.waitingForMig.add(id);
    const wait = this.lastRoundMs + REPLAN_AFTER_MS - nowMs;
    if (wait > 0 && waiting.every((id) => this.plannedFor.has(id))) {
      this.replan ??= setTimeout(() => {
        this.replan = undefined;
        this.planSoon();
      }, wait);
      this.replan.unref?.();
      return;
    }
    if (this.running) {
      this.again = true;
      return;
    }
    void this.tick(new Date(), { rederive: false });
  }

  /**
   * One planning round. `rederive: false` (a cycle's request, on the path of a waiting job):
   * planning only; the periodic tick re-derives lost queue work first.
   */
  async tick(now = new Date(), o: { rederive?: boolean } = {}): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      if (o.rederive !== false) await this.rederive(now);
      // The cluster before the demand: a job placed between the two reads then shows as placed,
      // never as still pending beside a slice it already took (which would re-partition another GPU).
      // The worker's kept snapshot (brought up to date from the change log), not a read of every node.
      const rows = (await this.snapshots.read()).nodes;
      const waiting = this.waitingForMig;
      this.waitingForMig = new Set();
      const [pending, replicas] = await Promise.all([this.demand.unplacedPendingJobs(), this.demand.missingReplicas()]);
      const vm = pending.some((p) => p.kind === 'vm');
      const tried = pending.filter((p) => p.tried || waiting.has(p.id));
      this.plannedFor = new Set(tried.map((p) => p.id));
      this.lastRoundMs = now.getTime();
      // personas: VM demand to serve, or idle VM nodes to give back
      if (vm || rows.some((n) => n.persona === 'vm_passthrough')) await this.planPersonas(rows, pending, now);
      if (tried.length || replicas.length) await this.planMig(rows, [...tried, ...replicas], now);
      if (this.config.power.enabled) await this.planPower(rows, [...pending, ...replicas], now);
    } catch (e) {
      this.logger.warn(`planning failed: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      this.running = false;
    }
    if (this.again) {
      this.again = false;
      await this.tick(new Date(), { rederive: false });
    }
  }

  private async planMig(rows: NodeRows, pending: PendingDemandRows, now: Date): Promise<void> {
    // (this runs after every cycle that left MIG work waiting: a node's MIG facts are read from
    // its row once, and the rows of unchanged nodes are the same objects from cycle to cycle)
    const inFlight: MigInFlight[] = [];
    const lastChangedAtMs = new Map<string, number>();
    for (const n of rows) {
      const facts = migFactsOf(n);
      for (const f of facts.inFlight) inFlight.push(f);
      for (const [id, ms] of facts.changedAt) lastChangedAtMs.set(id, ms);
    }
    const snapshot = buildSnapshot(rows, undefined, now.getTime());
    // powered-off (or powering) nodes' GPUs cannot be re-partitioned
    snapshot.nodes = snapshot.nodes.filter((n, i) => n.persona !== 'vm-passthrough' && rows[i]!.powerState === 'on');
    const plan = planMigChanges({ snapshot, pending, inFlight, lastChangedAtMs, nowMs: now.getTime(), holdMs: this.holdMs });
    for (const c of plan.changes) {
      const why = c.action === 'disable' ? 'whole-GPU demand: back to full size' : `MIG demand: ${c.created.map((e) => e.profile).join(', ')} for pending jobs`;
      await this.mig.request(c.gpuId, c.layout, why);
    }
    if (plan.changes.length) this.logger.log(`MIG plan: ${plan.changes.length} change(s)`);
  }

  private async planPersonas(rows: NodeRows, pending: PendingRows, now: Date): Promise<void> {
    // a node that is not powered on cannot switch persona
    const nodes: PersonaNode[] = rows
      .filter((n) => n.powerState === 'on')
      .map((n) => ({
        id: n.id,
        persona: personaToApi(n.persona),
        state: n.state,
        personaTarget: n.personaTarget ? personaToApi(n.personaTarget) : null,
        gpuModel: n.gpus[0]?.model ?? null,
        gpuCount: n.gpus.length,
        gpusFree: n.gpus.filter((g) => g.health === 'healthy' && g.allocations.length === 0).length,
        idle: n.gpus.every((g) => g.allocations.length === 0),
        personaChangedAtMs: n.personaChangedAt?.getTime() ?? null,
      }));
    const plan = planPersonas({ nodes, vmDemand: vmDemandOf(pending), nowMs: now.getTime(), holdMs: this.holdMs });
    for (const s of plan.switches) await this.queues.persona({ action: 'switch', nodeId: s.nodeId, persona: s.persona, reason: s.reason });
  }

  /**
   * Power management: boot off nodes for queued demand that fits nowhere, power down nodes
   * empty for the idle time (docs/power.md). Each change begins in Postgres (a power-down under
   * the node's row lock, refused when the node took work meanwhile) and goes out through the
   * `power` queue.
   */
  private async planPower(rows: NodeRows, pending: { id: string; kind: string; replicas: number; resources: unknown }[], now: Date): Promise<void> {
    const power = this.power;
    const [lastEnded, failed] = await Promise.all([power.lastWorkEndedAt(), power.nodesFailedToPowerUp()]);
    const nodes: PowerNode[] = rows.map((n) => {
      const since = [n.createdAt, n.powerChangedAt, lastEnded.get(n.id)].filter((d): d is Date => !!d).map((d) => d.getTime());
      return {
        id: n.id,
        state: n.state,
        powerState: powerToApi(n.powerState),
        gpuModel: n.gpus[0]?.model ?? null,
        gpuCount: n.gpus.length,
        gpusFree: n.gpus.filter((g) => g.health === 'healthy' && g.allocations.length === 0).length,
        allocations: n.gpus.reduce((s, g) => s + g.allocations.length, 0),
        emptySinceMs: Math.max(...since),
        failedPowerUp: failed.has(n.id),
      };
    });
    const idleMs = (this.config.power.idleSeconds / this.config.driver.simSpeed) * 1000;
    const plan = planPower({ nodes, demand: queuedReplicasOf(pending), nowMs: now.getTime(), idleMs, headroom: this.config.power.headroom });
    for (const u of plan.up) {
      if (await power.beginPowerUp(u.nodeId, `power management: ${u.reason}`, now))
        await this.queues.power({ action: 'on', nodeId: u.nodeId, reason: u.reason });
    }
    for (const d of plan.down) {
      if ((await power.beginPowerDown(d.nodeId, `power management: ${d.reason}`, now)) === true) {
        await this.queues.power({ action: 'off', nodeId: d.nodeId, reason: d.reason });
      }
    }
    if (plan.up.length || plan.down.length) this.logger.log(`power plan: ${plan.up.length} up, ${plan.down.length} down`);
  }

  /**
   * The queue work of changes in flight, re-derived from Postgres: a MIG change, persona switch,
   * drain or open incident whose queue job is gone (Redis lost or restarted empty, a job that
   * failed its attempts) is enqueued again. Only when no job for it waits or runs, and only for
   * changes older than ORPHAN_AFTER_MS (a request being enqueued right now is not an orphan),
   * except `afterRestart` (boot): then everything in flight without a live job is resumed.
   */
  async rederive(now = new Date(), o: { afterRestart?: boolean } = {}): Promise<number> {
    const old = (d: Date | null | undefined) => o.afterRestart || !d || now.getTime() - d.getTime() > ORPHAN_AFTER_MS;
    const reason = o.afterRestart ? 'resumed after a restart' : 're-derived: its queue job was lost';
    let n = 0;
    const [gpus, nodes, incidents] = await Promise.all([this.migChanges.gpusWithMigTarget(), this.nodes.nodesInTransition(), this.incidents.openIncidents()]);
    if (gpus.length) {
      const live = new Set((await this.queues.liveJobData('mig')).map((d) => d.gpuId));
      for (const g of gpus.filter((x) => !live.has(x.id) && old(x.migRequestedAt))) {
        n++;
        await this.queues.mig({ gpuId: g.id, layout: g.migTarget as { profile: string; start: number }[], reason });
      }
    }
    if (nodes.length) {
      const live = new Set((await this.queues.liveJobData('persona')).map((d) => d.nodeId));
      for (const node of nodes.filter((x) => !live.has(x.id) && old(x.transitionStartedAt))) {
        n++;
        if (node.state === 'switching' && node.personaTarget) {
          await this.queues.persona({ action: 'switch', nodeId: node.id, persona: personaToApi(node.personaTarget), reason });
        } else if (node.state === 'draining') {
          await this.queues.persona({ action: 'drain', nodeId: node.id, reason });
        }
      }
    }
    const powering = await this.power.nodesPowering();
    if (powering.length) {
      const live = new Set((await this.queues.liveJobData('power')).map((d) => d.nodeId));
      for (const node of powering.filter((x) => !live.has(x.id) && old(x.powerChangedAt))) {
        n++;
        await this.queues.power({ action: node.powerState === 'powering_up' ? 'on' : 'off', nodeId: node.id, reason });
      }
    }
    if (incidents.length) {
      const liveJobs = await this.queues.liveJobData('failover');
      // a fault still being handled has no incident id yet: leave its node alone
      const live = new Set(liveJobs.map((d) => d.incidentId).filter(Boolean));
      const faultingNames = new Set(liveJobs.filter((d) => d.action === 'fault').map((d) => d.nodeName ?? ''));
      const faulting = new Set((faultingNames.size ? await this.nodes.nodeNames() : []).filter((x) => faultingNames.has(x.name)).map((x) => x.id));
      for (const inc of incidents.filter((x) => !live.has(x.id) && old(x.detectedAt) && !(x.nodeId && faulting.has(x.nodeId)))) {
        n++;
        await this.queues.failover(
          { action: 'remediate', incidentId: inc.id },
          `remediate-${inc.id}-${o.afterRestart ? 'resume' : 'rederived'}-${now.getTime()}`,
        );
      }
    }
    if (n && !o.afterRestart) this.logger.warn(`re-derived ${n} lost node-manager job(s) from the database`);
    return n;
  }
}

/** A node row's MIG changes in flight and when its GPUs' layouts last changed, read once per row. */
interface MigFacts {
  inFlight: MigInFlight[];
  changedAt: [string, number][];
}

const migFactsOf = perRow((n): MigFacts => {
  const facts: MigFacts = { inFlight: [], changedAt: [] };
  for (const g of n.gpus) {
    if (g.migChangedAt) facts.changedAt.push([g.id, g.migChangedAt.getTime()]);
    if (g.migTarget !== null)
      facts.inFlight.push({
        model: g.model,
        target: g.migTarget as { profile: string; start: number }[],
        busyStarts: new Set(g.allocations.map((a) => a.migStart).filter((s): s is number => s !== null)),
      });
  }
  return facts;
});
