import { monitorEventLoopDelay } from 'node:perf_hooks';
import { coveringRows } from '../quotas/quota-coverage';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { PRIORITY_VALUE, migSliceFraction, type JobResources, type Reason } from '@gantry/contracts';
import { type CycleDecision, type NodeState, type ReplicaPlacement } from '@gantry/scheduler';
import { QueuesService } from '../../queues/queues.service';
import { crashPoint } from '../../common/crash-points';
import type { NodeRow } from '../cluster/cluster.repository';
import { ClusterSnapshotStore } from '../cluster/cluster-snapshot.store';
import { replicaGpuUnits } from '../quotas/job-units';
import { EndpointWorkSource } from '../endpoints/endpoint-work.source';
import { admit, type AdmissionContext, type Held, type TeamQuota } from './quota-admission';
import { planPreemption, type RunningJob } from './preemption';
import { budgetPeriod } from '../quotas/budget-period';
import { SchedulingRepository } from './scheduling.repository';
import type { Placement } from './placement-batch';
import type { NewAllocation } from '../allocations/gpu-slots';
import type { QuotaGuard } from '../quotas/quota-guard';
import { buildSnapshot, pendingJob } from '../cluster/snapshot';
import { ForeignGpuUse } from '../cluster/foreign-gpu-use.store';
import { FairShareService } from '../fair-share/fair-share.service';
import { withHistory } from '../fair-share/fair-usage';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { ReservationHoldsService } from '../reservations/reservation-holds.service';
import type { Hold } from '../reservations/reservation-holds';
import { placeAroundHolds, type HoldJobInfo } from './hold-placement';
import { WhatIfNodes } from './what-if-nodes';
import { ReasonRefresh } from './reason-refresh';
import { RepartitionRoom, type WholeGpuDemand } from './repartition-room';

export interface CycleReport {
  pending: number;
  placed: number;
  conflicts: number;
  /** Jobs this cycle sent to checkpoint-and-requeue to make room. */
  preempted: number;
  ms: number;
  /** Work left waiting for a MIG slice (the node manager plans a re-partition at once). */
  migWaiting?: number;
  /** Jobs not tried: the cycle had placed GANTRY_CYCLE_MAX_PLACEMENTS (the next cycle is asked for at once). */
  deferred?: number;
  /** The cluster snapshot: loaded in full this cycle, or nodes read again from the change log. */
  snapshot?: { full: boolean; reread: number };
  /** Milliseconds of each step, when there was pending work (a slow cycle is logged with them). */
  steps?: CycleSteps;
}

/** Where a cycle's time went: reads (snapshot, pending work, holds), derive (engine snapshot), admit, place (engine), commit, preempt, explain. */
export type CycleSteps = Record<'read' | 'derive' | 'admit' | 'place' | 'commit' | 'start' | 'preempt' | 'explain', number>;

/** How long each of a cycle's reads took from its start to its answer (they overlap: the read step is not their sum). */
class ReadTimes {
  private readonly ms: [string, number][] = [];

  time<T>(name: string, p: Promise<T>): Promise<T> {
    const t0 = performance.now();
    return p.finally(() => void this.ms.push([name, Math.round(performance.now() - t0)]));
  }

  toString(): string {
    return this.ms.map(([k, v]) => `${k} ${v}`).join(', ');
  }
}

/** A cycle slower than this is logged (warn) with its steps. */
const SLOW_CYCLE_MS = 1000;

/**
 * The worker's event-loop delay during a cycle (a slow cycle's log says how long the process
 * was busy with other work, its own MIG planning, telemetry or lifecycle messages, between
 * the cycle's steps). Sampled every 20 ms; reset at each cycle's start.
 */
const loopDelay = monitorEventLoopDelay({ resolution: 20 });
loopDelay.enable();

/**
 * Preemption planning stops starting new what-ifs after this long in one cycle (each is an
 * engine run; the jobs it did not reach, later in queue order, are planned in the next cycles).
 */
const PREEMPT_BUDGET_MS = 250;

type PendingRow = Awaited<ReturnType<SchedulingRepository['pendingJobs']>>[number];

/** What the caller of a cycle hears while it runs (the schedule processor wires the node manager). */
export interface CycleHooks {
  /**
   * Pending work (job ids, endpoint replica units) the engine could not place that asks for a MIG
   * slice: called right after the placements are committed, before preemption and explanations,
   * so that a re-partition of a free GPU is planned without waiting for the rest of the cycle.
   */
  migWaiting?(ids: string[]): void;
}

/** The scheduling cycle (docs/design.md section 4): snapshot, order, admit, place, commit, explain. */
@Injectable()
export class SchedulingService {
  private readonly logger = new Logger('scheduler');

  constructor(
    private readonly repo: SchedulingRepository,
    private readonly snapshots: ClusterSnapshotStore,
    private readonly queues: QueuesService,
    private readonly endpoints: EndpointWorkSource,
    private readonly foreign: ForeignGpuUse,
    private readonly fairShare: FairShareService,
    private readonly reservations: ReservationHoldsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private preemptedThisCycle = 0;
  private readonly reasonRefresh = new ReasonRefresh();

  async cycle(hooks: CycleHooks = {}): Promise<CycleReport> {
    const t0 = performance.now();
    loopDelay.reset();
    this.preemptedThisCycle = 0;
    // 1. snapshot
    // Endpoint replicas are a second source of pending work (one unit per missing replica).
    // The cluster as the worker keeps it: read in full at boot, then only the nodes changed since (incremental-snapshot.ts).
    const reads = new ReadTimes();
    const [read, jobs, replicas] = await Promise.all([
      reads.time('snapshot', this.snapshots.read()),
      reads.time('queue', this.repo.pendingJobs()),
      reads.time('replicas', this.endpoints.pending()),
    ]);
    const nodes = read.nodes;
    const pending: PendingRow[] = [...jobs, ...(replicas as unknown as PendingRow[])];
    // Reservations: the GPUs each open or coming window holds; at a window's start, other teams'
    // preemptible work on them is checkpointed and requeued (docs/reservations.md).
    // 2. order: priority, then age (the engine orders again, with fair share, among admitted jobs)
    const ordered = [...pending].sort((a, b) => PRIORITY_VALUE[b.priority] - PRIORITY_VALUE[a.priority] || a.createdAt.getTime() - b.createdAt.getTime());
    // (the quota state is read meanwhile: an eviction changes no allocation before its checkpoint)
    const [holds, q] = await Promise.all([
      reads.time('holds', this.reservations.holds(nodes)),
      pending.length ? reads.time('quota', this.quotaState(ordered)) : undefined,
    ]);
    await reads.time('evict', this.evictFromHolds(holds, nodes));
    const snapshotRead = { full: read.full, reread: read.reread };
    if (!q) return { pending: 0, placed: 0, conflicts: 0, preempted: this.preemptedThisCycle, ms: performance.now() - t0, snapshot: snapshotRead };
    const lap = stopwatch(t0);
    const steps = { read: lap() } as CycleSteps;
    const snapshot = buildSnapshot(nodes, undefined, Date.now(), this.foreign.current());
    steps.derive = lap();
    // 3. admit: guaranteed, borrowing within the tenant's pool up to the limit, tenant total, budgets
    const { admitted, borrowing, held } = admit(
      ordered.map((j) => ({
        ...j,
        gpuModel: (j.resources as JobResources).gpuModel,
        units: replicaGpuUnits(j.resources as JobResources) * j.replicas,
        preemptible: j.preemptible === true,
        canBorrow: j.preemptible === true && j.priority !== 'critical',
      })),
      q.usage,
      q.quotas,
      q.ctx,
    );
    steps.admit = lap();
    // 4-5. place (the engine), fair share by each team's weighted dominant resource share
    // (reservations: holders first, then the rest around the GPUs held for others)
    const holdInfo = this.holdInfo(pending);
    const decision: CycleDecision = placeAroundHolds(snapshot, admitted.map(pendingJob), holds, holdInfo, {
      teamUsage: q.fairUsage,
      teamWeights: q.weights,
      // A cycle places at most this many jobs (GANTRY_CYCLE_MAX_PLACEMENTS); the rest of the queue,
      // in queue order, waits for the next cycle, which starts at once. A job that arrives
      // meanwhile (a higher priority, a cancellation) is seen within one bounded cycle.
      maxPlacements: this.config.cycleMaxPlacements || undefined,
      // buildSnapshot's node states are kept per row and never changed in place
      frozenStates: true,
    });
    steps.place = lap();
    // 6. commit, re-checking the quota under a per-team lock
    const byId = new Map(pending.map((j) => [j.id, j]));
    const nodesById = new Map(snapshot.nodes.map((n) => [n.id, n]));
    let placed = 0;
    let conflicts = 0;
    const lost: { jobId: string; reasons: Reason[] }[] = [];
    // Jobs: every placement of the cycle in one transaction; endpoint replicas: each its own.
    const placements: (Placement & { index: number })[] = [];
    const outcome: boolean[] = [];
    for (const [index, d] of decision.placed.entries()) {
      const job = byId.get(d.jobId)!;
      if (this.endpoints.owns(job.id)) {
        outcome[index] = await this.endpoints.commit(job, toAllocations(job, d.replicas, nodesById), q.guard(job));
      } else {
        placements.push({
          index,
          job,
          allocs: toAllocations(job, d.replicas, nodesById),
          summary: describe(d.replicas, nodesById, borrowing.has(job.id)),
          guard: q.guard(job),
        });
      }
    }
    const committed = await this.repo.commitPlacements(placements);
    placements.forEach((p, i) => (outcome[p.index] = committed[i]!));
    const started: string[] = [];
    decision.placed.forEach((d, index) => {
      if (outcome[index]) {
        placed++;
        if (!this.endpoints.owns(d.jobId)) started.push(d.jobId);
      } else {
        conflicts++;
        this.snapshots.markDirty(d.replicas.map((r) => r.nodeId));
        lost.push({ jobId: d.jobId, reasons: [{ code: 'placement_conflict', message: 'the chosen GPUs changed meanwhile; retrying in the next cycle' }] });
      }
    });
    if (placed) crashPoint('placement.committed');
    steps.commit = lap();
    // The driver gets the cycle's starts together (startMany), through one lifecycle message.
    if (started.length) await this.queues.lifecycleStartMany(started);
    const migWaiting = decision.pending.filter((u) => (byId.get(u.jobId)?.resources as JobResources | undefined)?.migProfile).map((u) => u.jobId);
    if (migWaiting.length) hooks.migWaiting?.(migWaiting);
    steps.start = lap();
    // 5b. plan preemption for what is still waiting: reclaim from borrowers, lower priority in the team
    const room = new RepartitionRoom(snapshot, wholeGpuDemand(decision.pending.map((u) => byId.get(u.jobId))));
    const preempting = await this.preempt(nodes, ordered, decision, held, borrowing, q, byId, holds, holdInfo, room);
    decision.pending = decision.pending.map((u) => preempting.get(u.jobId) ?? u);
    for (const h of held) h.reasons = preempting.get(h.jobId)?.reasons ?? h.reasons;
    steps.preempt = lap();
    // 7. explain
    // (a reason whose figures alone moved is written at most every few seconds: reason-refresh.ts)
    const explainedAt = Date.now();
    const reasons = this.reasonRefresh.due(
      [...held.map((h) => ({ jobId: h.jobId, reasons: h.reasons })), ...decision.pending, ...lost],
      (id) => byId.get(id)?.reasons,
      explainedAt,
    );
    await this.repo.setReasons(reasons.filter((u) => !this.endpoints.owns(u.jobId)));
    await this.endpoints.explain(reasons);
    this.reasonRefresh.written(
      reasons.map((u) => u.jobId),
      byId.keys(),
      explainedAt,
    );
    if (conflicts) await this.queues.requestSchedule('placement conflicts');
    const deferred = decision.deferred?.length ?? 0;
    if (deferred) await this.queues.requestSchedule(`${deferred} job(s) left for the next cycle`);
    steps.explain = lap();
    const report = {
      pending: pending.length,
      placed,
      conflicts,
      preempted: this.preemptedThisCycle,
      ms: Math.round(performance.now() - t0),
      migWaiting: migWaiting.length,
      deferred,
      snapshot: snapshotRead,
      steps,
    };
    if (report.ms > SLOW_CYCLE_MS)
      this.logger.warn(
        `slow cycle: ${report.ms} ms for ${pending.length} pending (${placed} placed, ${deferred} deferred); ${Object.entries(steps)
          .map(([k, v]) => (k === 'read' ? `read ${v} (${reads})` : `${k} ${v}`))
          .join(', ')} ms; snapshot ${read.full ? 'full load' : `${read.reread} nodes read again`}; event loop delay max ${Math.round(loopDelay.max / 1e6)} ms`,
      );
    if (placed || conflicts)
      this.logger.log(
        `cycle: ${placed} placed, ${conflicts} conflicts, ${pending.length} pending, ${report.ms} ms (snapshot: ${read.full ? 'full load' : `${read.reread} nodes read again`})`,
      );
    return report;
  }

  /** Usage, quotas (with the tenants' cohorts), budgets and fair-share inputs of one cycle. */
  private async quotaState(ordered: PendingRow[]) {
    const teamIds = [...new Set(ordered.map((j) => j.teamId))];
    const now = new Date();
    const [held, teams, history] = await Promise.all([
      this.repo.heldByTeamAndModel(),
      this.repo.quotaContext(teamIds),
      this.fairShare.cycleHistoryGpus(now.getTime()),
    ]);
    const usage = held.map((h) => ({ teamId: h.teamId, gpuModel: h.gpuModel, units: h.units }));
    const heldNow: Record<string, { gpus: number; cpuMilli: number; memoryMiB: number }> = {};
    for (const h of held) {
      const t = (heldNow[h.teamId] ??= { gpus: 0, cpuMilli: 0, memoryMiB: 0 });
      t.gpus += h.units;
      t.cpuMilli += h.cpuMilli;
      t.memoryMiB += h.memoryMiB;
    }
    // Fair share over time: what each team holds now blended with its decayed past usage.
    const fairUsage = withHistory(heldNow, history, this.fairShare.params.historyWeight);
    const quotas: TeamQuota[] = teams.flatMap((t) =>
      t.quotas.map((x) => ({ teamId: t.id, gpuModel: x.gpuModel, guaranteed: Number(x.guaranteed), limit: Number(x.limit) })),
    );
    const tenantOf = new Map(teams.map((t) => [t.id, t.tenantId]));
    const tenantTotals = new Map(teams.map((t) => [t.tenantId, t.gpuTotal]));
    const budgetRows = teams.flatMap((t) => t.quotas.filter((x) => x.gpuHourBudget != null).map((x) => ({ teamId: t.id, row: x })));
    const period = budgetPeriod(now);
    const hours = await this.repo.gpuHoursByTeam([...new Set(budgetRows.map((b) => b.teamId))], period.start, period.end, now);
    const budgets: AdmissionContext['budgets'] = new Map();
    for (const b of budgetRows) {
      if (budgets.has(b.teamId) && b.row.gpuModel !== '*') continue;
      const budget = Number(b.row.gpuHourBudget);
      const gpuHours = hours.get(b.teamId) ?? 0;
      budgets.set(b.teamId, {
        exhausted: gpuHours >= budget,
        policy: b.row.budgetPolicy === 'preemptible-only' ? 'preemptible-only' : 'block',
        gpuHours,
        budget,
      });
    }
    const rowsOf = new Map<string, TeamQuota[]>();
    for (const x of quotas) rowsOf.set(x.teamId, [...(rowsOf.get(x.teamId) ?? []), x]);
    const usedBy = new Map<string, number>();
    for (const u of usage) {
      usedBy.set(`${u.teamId}|${u.gpuModel}`, (usedBy.get(`${u.teamId}|${u.gpuModel}`) ?? 0) + u.units);
      usedBy.set(`${u.teamId}|*`, (usedBy.get(`${u.teamId}|*`) ?? 0) + u.units);
    }
    const borrowerTeams = new Set(quotas.filter((x) => (usedBy.get(`${x.teamId}|${x.gpuModel}`) ?? 0) > (x.guaranteed ?? x.limit) + 1e-9).map((x) => x.teamId));
    return {
      usage,
      quotas,
      ctx: { tenantOf, tenantTotals, budgets } satisfies AdmissionContext,
      fairUsage,
      weights: Object.fromEntries(teams.map((t) => [t.id, Number(t.weight)])),
      borrowerTeams,
      rowsOf,
      usedBy,
      guard: (job: PendingRow): QuotaGuard | undefined => {
        const model = (job.resources as JobResources).gpuModel;
        const limits = coveringRows(rowsOf.get(job.teamId) ?? [], model).map((x) => ({ gpuModel: x.gpuModel, limit: x.limit }));
        const total = tenantTotals.get(tenantOf.get(job.teamId) ?? '') ?? null;
        return { limits, tenantTotal: total };
      },
    };
  }

  /**
   * Preemption (checkpoint-aware): for each job still waiting, in queue order, either wait for
   * jobs already being preempted, or choose victims (borrowers of other teams when the job is
   * within its guaranteed quota; lower-priority jobs of its own team) whose GPUs would let it be
   * placed, and suspend them with a requeue. Returns the new reasons of the preempting jobs.
   */
  private async preempt(
    nodes: NodeRow[],
    ordered: PendingRow[],
    decision: CycleDecision,
    held: Held[],
    borrowing: Set<string>,
    q: Awaited<ReturnType<SchedulingService['quotaState']>>,
    byId: Map<string, PendingRow>,
    holds: Hold[],
    holdInfo: Map<string, HoldJobInfo>,
    room: RepartitionRoom,
  ): Promise<Map<string, { jobId: string; reasons: Reason[] }>> {
    const out = new Map<string, { jobId: string; reasons: Reason[] }>();
    const unplaced = new Set(decision.pending.map((p) => p.jobId));
    const heldById = new Map(held.map((h) => [h.jobId, h]));
    const teamExcess = (h: Held | undefined) => (h && (h.rule === 'quota_limit' || h.rule === 'borrow_not_allowed') ? (h.excess ?? 0) : 0);
    const tenantExcess = (h: Held | undefined) => (h && h.rule === 'tenant_total' && !h.borrowing ? (h.excess ?? 0) : 0);
    const waiting = ordered.filter((j) => {
      if (this.endpoints.owns(j.id)) return false;
      const h = heldById.get(j.id);
      return unplaced.has(j.id) || teamExcess(h) > 0 || tenantExcess(h) > 0;
    });
    // MIG work that a re-partition of an idle GPU will serve waits for it: no what-if, no victim
    const toPlan: PendingRow[] = [];
    for (const job of waiting) {
      const r = job.resources as JobResources;
      if (unplaced.has(job.id) && r.migProfile && room.serves(r.migProfile, r.gpuModel ? [r.gpuModel] : undefined)) {
        out.set(job.id, {
          jobId: job.id,
          reasons: [{ code: 'mig_repartition', message: `waiting for an idle GPU to be re-partitioned into a MIG ${r.migProfile} slice (node manager)` }],
        });
      } else toPlan.push(job);
    }
    if (!toPlan.length) return out;
    const { jobs: running, holding } = await this.repo.runningJobs();
    const whatIf = new WhatIfNodes(nodes);
    const holders = whatIf.holders;
    // GPUs let go since the cycle's snapshot was read (a job requeued or ended meanwhile): free
    // already, so a what-if must not preempt another job for the room they make
    const released = [...holders.keys()].filter((id) => !holding.has(id));
    const toCandidate = (r: (typeof running)[number]): RunningJob => ({
      id: r.id,
      teamId: r.teamId,
      tenantId: r.tenantId,
      priority: PRIORITY_VALUE[r.priority],
      preemptible: r.preemptible && r.priority !== 'critical',
      units: r.units,
      startedAtMs: (r.startedAt ?? r.createdAt).getTime(),
    });
    const candidates = running.filter((r) => r.state === 'running').map(toCandidate);
    const freeing = running.filter((r) => r.state === 'suspending').map(toCandidate);
    let planned = 0;
    // Each feasibility check is an engine run (on the nodes the victims leave, what-if-nodes.ts,
    // or once per quota-held job on the whole snapshot): bound them per cycle.
    let checks = 0;
    const MAX_CHECKS = 300;
    const deadline = performance.now() + PREEMPT_BUDGET_MS;
    for (const job of toPlan.slice(0, 50)) {
      if (checks >= MAX_CHECKS || performance.now() > deadline) break;
      if (planned >= 4) break;
      const engineJob = pendingJob(job);
      const fits = (rows: readonly NodeRow[], without: Set<string>) =>
        placeAroundHolds(buildSnapshot(rows, without, Date.now(), this.foreign.current(), whatIf.holding(without)), [engineJob], holds, holdInfo, {
          frozenStates: true,
        }).placed.length === 1;
      // The engine found no room for a job it was given this cycle: room can only appear where victims leave.
      let fitsAsIs: boolean | undefined = unplaced.has(job.id) ? false : undefined;
      const h = heldById.get(job.id);
      const hasRows = (q.rowsOf.get(job.teamId)?.length ?? 0) > 0;
      const plan = planPreemption({
        job: {
          id: job.id,
          teamId: job.teamId,
          tenantId: job.tenantId,
          priority: PRIORITY_VALUE[job.priority],
          withinGuaranteed: hasRows && (h ? h.rule === 'tenant_total' && !h.borrowing : !borrowing.has(job.id)),
          teamExcess: teamExcess(h),
          tenantExcess: tenantExcess(h),
        },
        running: candidates,
        borrowerTeams: q.borrowerTeams,
        freeing,
        released,
        canPlace: (without) => {
          // A job held by its quota may fit anywhere once within it: the whole cluster as it is, once.
          if (fitsAsIs === undefined) fitsAsIs = ++checks <= MAX_CHECKS && fits(nodes, new Set());
          if (fitsAsIs) return true;
          return ++checks <= MAX_CHECKS && fits(whatIf.of(without, job), without);
        },
      });
      if (plan.kind === 'wait') {
        out.set(job.id, {
          jobId: job.id,
          reasons: [
            {
              code: 'preempting',
              message: plan.freeing
                ? `waiting for ${plan.freeing} preempted job(s) to checkpoint and release their GPUs`
                : 'GPUs were released since this cycle read the cluster: placed on the next cycle',
            },
          ],
        });
        continue;
      }
      if (plan.kind !== 'preempt') continue;
      planned++;
      let done = 0;
      for (const v of plan.victims) {
        const why =
          v.why === 'reclaim'
            ? `preempted: team ${job.teamId} reclaims its guaranteed quota for job ${job.name}; requeued with its checkpoint`
            : `preempted by higher-priority job ${job.name} (${job.priority}) of the same team; requeued with its checkpoint`;
        if (await this.repo.preempt({ id: v.job.id, tenantId: running.find((r) => r.id === v.job.id)?.tenantId ?? job.tenantId }, why)) {
          freeing.push(v.job);
          candidates.splice(candidates.indexOf(v.job), 1);
          done++;
          this.preemptedThisCycle++;
          await this.queues.lifecycle({ action: 'suspend', jobId: v.job.id });
        }
      }
      out.set(job.id, {
        jobId: job.id,
        reasons: [
          {
            code: 'preempting',
            message: `preempting ${done} job(s) (${plan.victims[0]!.why === 'reclaim' ? 'reclaiming guaranteed quota from borrowers' : 'lower priority in the team'}); placed once they checkpoint and release their GPUs`,
          },
        ],
      });
      void byId;
    }
    return out;
  }

  /** Per pending job: preemptible, and when its declared run would end if it started now (wall-clock ms). */
  private holdInfo(pending: PendingRow[], now = Date.now()): Map<string, HoldJobInfo> {
    const speed = this.config.driver.simSpeed || 1;
    return new Map(
      pending.map((j) => {
        const left = j.durationSeconds ? Math.max(0, j.durationSeconds - (j.progressSeconds ?? 0)) : null;
        return [j.id, { preemptible: j.preemptible === true && j.priority !== 'critical', endsByMs: left === null ? null : now + (left / speed) * 1000 }];
      }),
    );
  }

  /**
   * A window that is open: other teams' preemptible jobs on the GPUs it holds are checkpointed
   * and requeued, so the holder gets them within the bound of docs/reservations.md. Work that
   * cannot be preempted stays (the hold chose it last; it ran there before the reservation).
   */
  private async evictFromHolds(holds: Hold[], nodes: NodeRow[]): Promise<void> {
    const open = holds.filter((h) => h.active && h.victims.length);
    if (!open.length) return;
    const tenantOf = new Map(nodes.flatMap((n) => n.gpus.flatMap((g) => g.allocations.map((a) => [a.jobId ?? '', a.tenantId] as const))));
    const victims = new Map<string, { tenantId: string; hold: Hold }>();
    for (const h of open) for (const jobId of h.victims) victims.set(jobId, { tenantId: tenantOf.get(jobId)!, hold: h });
    for (const [jobId, v] of victims) {
      const why = `preempted: reservation "${v.hold.name}" of team ${v.hold.teamId} holds these GPUs from ${new Date(v.hold.start).toISOString()}; requeued with its checkpoint`;
      if (await this.repo.preempt({ id: jobId, tenantId: v.tenantId }, why)) {
        this.preemptedThisCycle++;
        await this.queues.lifecycle({ action: 'suspend', jobId });
      }
    }
  }
}

/** The whole GPUs that the cycle's unplaced jobs ask for (a MIG re-partition leaves them whole). */
function wholeGpuDemand(jobs: readonly (Pick<PendingRow, 'resources' | 'replicas'> | undefined)[]): WholeGpuDemand[] {
  const out: WholeGpuDemand[] = [];
  for (const j of jobs) {
    const r = j?.resources as JobResources | undefined;
    if (r?.gpus) out.push({ count: r.gpus * j!.replicas, gpuModels: r.gpuModel ? [r.gpuModel] : undefined });
  }
  return out;
}

/** Allocation rows of a placement: the replica's CPU and memory ride on its first GPU row. */
export function toAllocations(job: Pick<PendingRow, 'resources'>, replicas: ReplicaPlacement[], nodes: Map<string, NodeState>): NewAllocation[] {
  const r = job.resources as JobResources;
  const out: NewAllocation[] = [];
  for (const rep of replicas) {
    const node = nodes.get(rep.nodeId)!;
    rep.gpus.forEach((g, i) => {
      const gpu = node.gpus.find((x) => x.id === g.gpuId)!;
      const milli = g.migProfile ? 1000 : (g.milli ?? 1000);
      const units = g.migProfile ? (migSliceFraction(g.migProfile, gpu.model) ?? 1) : milli / 1000;
      out.push({
        replica: rep.replica,
        nodeId: rep.nodeId,
        gpuId: g.gpuId,
        gpuModel: gpu.model,
        migProfile: g.migProfile,
        migStart: g.migStart,
        milli,
        gpuUnits: units,
        cpuMilli: i === 0 ? r.cpuMilli : 0,
        memoryMiB: i === 0 ? r.memoryMiB : 0,
        makeShared: milli < 1000 && !g.migProfile && gpu.mode === 'whole',
      });
    });
  }
  return out;
}

function describe(replicas: ReplicaPlacement[], nodes: Map<string, NodeState>, borrowing = false): string {
  const parts = replicas.map((r) => {
    const node = nodes.get(r.nodeId)!;
    const gpus = r.gpus.map((g) =>
      g.migProfile ? `${g.index}:${g.migProfile}@${g.migStart}` : g.milli && g.milli < 1000 ? `${g.index}:${g.milli / 1000}` : `${g.index}`,
    );
    return `replica ${r.replica} on ${node.name} GPU ${gpus.join(',')}`;
  });
  return `placed${borrowing ? ' on borrowed quota (preemptible: reclaimed when a lender needs its guaranteed GPUs)' : ''}: ${parts.join('; ')}`;
}

/** Milliseconds since the last call (the first: since `t0`), rounded. */
function stopwatch(t0: number): () => number {
  let last = t0;
  return () => {
    const now = performance.now();
    const ms = Math.round(now - last);
    last = now;
    return ms;
  };
}
