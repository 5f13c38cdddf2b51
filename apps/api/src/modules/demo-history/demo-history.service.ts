import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Prisma } from '@gantry/db';
import { MIG_MODELS, migProfileOfClass } from '@gantry/contracts';
import type { GpuClaim } from '@gantry/driver';
import { nodeState, type MigLayoutEntry } from '@gantry/planner';
import { validateMigLayout, type NodeState, type ReplicaPlacement } from '@gantry/scheduler';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { newId } from '../../common/ids';
import { allocationRow, type NewAllocation } from '../allocations/gpu-slots';
import { classifyXid } from '../failover/fault-classification';
import { holdingContribution, type Holding } from '../fair-share/usage-decay';
import { toAllocations } from '../scheduling/scheduling.service';
import { bucketOf } from '../telemetry/telemetry-tick';
import { DemoHistoryRepository, type PastEvent, type PastJob, type PastRows } from './demo-history.repository';
import { replayDemo, type DemoRun, type ReplayNode } from './demo-replay';
import { pastRollups, type PastAllocation } from './demo-telemetry';
import { demoWeek, type DemoJob, type DemoTeam } from './demo-week';

export type DemoHistoryReport =
  | {
      written: true;
      from: string;
      to: string;
      jobs: number;
      runs: number;
      allocations: number;
      faults: number;
      rollupRows: number;
      ms: number;
      writeMs: number;
    }
  | { written: false; reason: string };

const DAY_MS = 86_400_000;
/** Minute rollups of the past cover at most its last day (the 24 h charts); hours and days cover all of it. */
const MINUTE_ROLLUP_HOURS = 24;
const FAULTS = 2;
const SEED = 20_261_204;
/** Xid 79 (GPU fallen off the bus): the fault the past's incidents record. */
const FAULT_XID = 79;

/**
 * The demo's past (docs/demo.md): a synthetic week of jobs (demo-week) replayed through the
 * scheduling engine on the cluster's inventory (demo-replay), the telemetry it would have left
 * (demo-telemetry), and its rows (jobs, allocations, events, incidents, rollups, decayed usage)
 * written once, all in one transaction, ending where the live telemetry begins.
 */
@Injectable()
export class DemoHistoryService {
  private readonly logger = new Logger('demo-history');

  constructor(
    private readonly repo: DemoHistoryRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async run(now = new Date()): Promise<DemoHistoryReport> {
    const t0 = performance.now();
    if (await this.repo.written()) return { written: false, reason: 'the demo history is already written' };
    const [inventory, teamRows, firstLive] = await Promise.all([this.repo.inventory(), this.repo.teams(), this.repo.firstLiveMinute()]);
    if (!inventory.length) return { written: false, reason: 'the cluster has no nodes yet' };
    const teams: DemoTeam[] = teamRows
      .map((t) => ({ id: t.id, tenantId: t.tenantId, slug: t.slug, limit: Number(t.quotas[0]?.limit ?? 0) }))
      .filter((t) => t.limit > 0);
    if (!teams.length) return { written: false, reason: 'no team has a GPU quota' };

    // The past ends before the first window a live telemetry tick can have written.
    const interval = this.config.telemetry.intervalSeconds * 1000;
    const toMs = bucketOf(new Date(Math.min(now.getTime() - 2 * interval, firstLive ? firstLive.getTime() - interval : Infinity)), 60).getTime();
    if (now.getTime() - toMs > DAY_MS) return { written: false, reason: 'the cluster already has more than a day of its own telemetry' };
    const fromMs = toMs - this.config.demoHistory.days * DAY_MS;
    const seconds = (toMs - fromMs) / 1000;

    const nodes = withMigPartition(
      inventory.map((n) => ({
        id: n.id,
        name: n.name,
        leaf: n.leaf.name,
        spine: n.leaf.spine.name,
        cpuMilli: n.cpuMilli,
        memoryMiB: n.memoryMiB,
        gpus: n.gpus,
      })),
    );
    const migNode = nodes.find((n) => n.migLayout);
    const mig = migNode ? { gpuModel: migNode.gpus[0]!.model, profile: migNode.migLayout![0]!.profile } : undefined;
    const jobs = demoWeek({ teams, startMs: fromMs, seconds, mig, faults: FAULTS, seed: SEED });
    this.logger.log(`replaying ${jobs.length} jobs of ${teams.length} teams over ${this.config.demoHistory.days} days on ${nodes.length} nodes`);
    const runs = await replayDemo(
      nodes,
      jobs,
      {
        team: new Map(teams.map((t) => [t.id, t.limit])),
        tenant: new Map(teamRows.filter((t) => t.tenant.gpuTotal !== null).map((t) => [t.tenantId, Number(t.tenant.gpuTotal)])),
      },
      seconds,
    );
    const rows = this.pastRows(nodes, runs, fromMs);
    const rollups = await pastRollups({
      nodes: nodes.map((n) => ({ name: n.name, down: false, gpus: inventory.find((x) => x.id === n.id)!.gpus })),
      gpus: nodes.flatMap((n) => n.gpus.map((g) => ({ id: g.id, nodeId: n.id, nodeName: n.name, index: g.index, model: g.model }))),
      allocations: rows.past,
      fromMs,
      toMs,
      minuteRollupsFromMs: Math.max(fromMs, toMs - Math.min(MINUTE_ROLLUP_HOURS, this.config.telemetry.minuteRetentionHours) * 3_600_000),
      idleSmPct: this.config.telemetry.idleSmPct,
    });
    this.logger.log(`${runs.length} runs placed, ${rows.allocations.length} allocations, ${rollups.length} rollup rows: writing`);
    const holdings: Holding[] = rows.past.map((a) => ({ teamId: a.teamId, gpus: a.gpuUnits, startMs: a.startedAt.getTime(), endMs: a.endedAt.getTime() }));
    const decay = { ...this.config.fairShare, simSpeed: this.config.driver.simSpeed };
    const tWrite = performance.now();
    const written = await this.repo.write({
      fromAt: new Date(fromMs),
      toAt: new Date(toMs),
      jobs: rows.jobs,
      allocations: rows.allocations,
      events: rows.events,
      incidents: rows.incidents,
      rollups,
      usageTeams: teams.map((t) => ({ teamId: t.id, tenantId: t.tenantId })),
      // The past's holdings decayed to the stored record's time (the cycle rolls on from there), or to the past's end.
      usage: (teamId, record) => {
        const asOfMs = record?.asOfMs ?? toMs;
        const added = holdings.filter((h) => h.teamId === teamId).reduce((s, h) => s + holdingContribution(h, 0, asOfMs, decay), 0);
        return { gpuSeconds: (record?.gpuSeconds ?? 0) + added, asOfMs };
      },
    });
    if (!written) return { written: false, reason: 'the demo history is already written' };
    return {
      written: true,
      from: new Date(fromMs).toISOString(),
      to: new Date(toMs).toISOString(),
      jobs: rows.jobs.length,
      runs: runs.length,
      allocations: rows.allocations.length,
      faults: rows.incidents.length,
      rollupRows: rollups.length,
      ms: Math.round(performance.now() - t0),
      writeMs: Math.round(performance.now() - tWrite),
    };
  }

  /** The rows of the runs: each job with its runs' allocations and events, each fault's incident. */
  private pastRows(nodes: ReplayNode[], runs: DemoRun[], fromMs: number) {
    const states = new Map<string, NodeState>(nodes.map((n) => [n.id, inventoryNodeState(n)]));
    const nodeName = new Map(nodes.map((n) => [n.id, n.name]));
    const gpuIndex = new Map(nodes.flatMap((n) => n.gpus.map((g) => [g.id, g.index] as const)));
    const at = (s: number) => new Date(fromMs + s * 1000);
    const byJob = new Map<DemoJob, DemoRun[]>();
    for (const r of runs) byJob.set(r.job, [...(byJob.get(r.job) ?? []), r]);
    const jobs: PastJob[] = [];
    const allocations: PastRows['allocations'] = [];
    const past: PastAllocation[] = [];
    const events: PastEvent[] = [];
    const event = (e: Omit<PastEvent, 'id'>) => events.push({ ...e, id: newId(e.createdAt.getTime()) });
    const incidents: Prisma.IncidentCreateManyInput[] = [];
    const speed = this.config.driver.simSpeed;
    for (const [job, jobRuns] of byJob) {
      const id = newId(fromMs + job.arrival * 1000);
      const owner = { tenantId: job.tenantId, teamId: job.teamId, jobId: id };
      const last = jobRuns[jobRuns.length - 1]!;
      const ran = jobRuns.reduce((s, r) => s + (r.end - r.start), 0);
      const ending = endingOf(last);
      jobs.push({
        id,
        tenantId: job.tenantId,
        teamId: job.teamId,
        name: job.name,
        kind: job.kind,
        state: ending.state,
        priority: job.priorityName,
        replicas: job.replicas,
        resources: job.resources,
        durationSeconds: job.duration * speed,
        progressSeconds: Math.min(job.duration, ran) * speed,
        reasons: ending.reasons,
        createdAt: at(job.arrival),
        startedAt: at(jobRuns[0]!.start),
        finishedAt: at(last.end),
      });
      event({ tenantId: job.tenantId, jobId: id, type: 'job.submitted', message: `submitted: ${job.name}`, createdAt: at(job.arrival) });
      for (const run of jobRuns) {
        const allocs = toAllocations({ resources: job.resources }, run.replicas, states);
        for (const a of allocs) {
          const { makeShared: _shared, ...slot } = a;
          allocations.push({
            ...allocationRow(owner, slot),
            id: newId(fromMs + run.start * 1000),
            activeSlot: null,
            startedAt: at(run.start),
            endedAt: at(run.end),
          });
          past.push({
            ...pastAllocation(owner, slot, { nodeName: nodeName.get(a.nodeId)!, gpuIndex: gpuIndex.get(a.gpuId)! }),
            startedAt: at(run.start),
            endedAt: at(run.end),
          });
        }
        event({ tenantId: job.tenantId, jobId: id, type: 'job.placed', message: describePlacement(run.replicas, nodeName), createdAt: at(run.start) });
        if (run.ending === 'fault') {
          const gpu = run.replicas[0]!.gpus[0]!;
          const fault = classifyXid(FAULT_XID);
          const detected = at(run.end);
          const resolved = at(run.end + 30 + 5);
          incidents.push({
            kind: fault.kind,
            severity: fault.severity,
            scope: fault.scope,
            remediation: fault.remediation,
            summary: fault.summary,
            nodeId: run.replicas[0]!.nodeId,
            gpuId: gpu.gpuId,
            xid: FAULT_XID,
            state: 'resolved',
            detectedAt: detected,
            mitigatedAt: detected,
            resolvedAt: resolved,
            attempts: 1,
            jobIds: [id],
            tenantIds: [job.tenantId],
            timeline: [
              { at: detected.toISOString(), step: 'detected', message: `Xid ${FAULT_XID} on GPU ${gpu.index} of ${nodeName.get(run.replicas[0]!.nodeId)}` },
              { at: detected.toISOString(), step: 'jobs-moved', message: `job ${job.name} rescheduled` },
              { at: resolved.toISOString(), step: 'resolved', message: 'GPU reset; back in service' },
            ] as Prisma.InputJsonValue,
          });
          event({
            tenantId: job.tenantId,
            jobId: id,
            type: 'job.rescheduled',
            message: `Xid ${FAULT_XID} on its GPU: rescheduled; ${allocs.length} GPU allocation(s) released`,
            createdAt: detected,
          });
        }
      }
      if (last.ending !== 'fault' || ending.state === 'failed')
        event({ tenantId: job.tenantId, jobId: id, type: ending.event, message: ending.message, createdAt: at(last.end) });
    }
    return { jobs, allocations, past, events, incidents };
  }
}

/** The job's final state from its last run. */
function endingOf(last: DemoRun): {
  state: 'succeeded' | 'failed' | 'cancelled';
  event: string;
  message: string;
  reasons: { code: string; message: string }[];
} {
  switch (last.ending) {
    case 'done':
      return { state: 'succeeded', event: 'job.succeeded', message: 'completed', reasons: [] };
    case 'fault': {
      const message = `Xid ${FAULT_XID} took its GPU away and the demo history ended before it ran again`;
      return { state: 'failed', event: 'job.failed', message, reasons: [{ code: 'gpu_fault', message }] };
    }
    case 'horizon': {
      const message = 'the demo history ends here: the live simulated cluster starts empty';
      return { state: 'cancelled', event: 'job.cancelled', message, reasons: [{ code: 'demo_history_end', message }] };
    }
  }
}

function describePlacement(replicas: readonly ReplicaPlacement[], nodeName: ReadonlyMap<string, string>): string {
  const parts = replicas.map((r) => {
    const gpus = r.gpus.map((g) =>
      g.migProfile ? `${g.index}:${g.migProfile}@${g.migStart}` : g.milli && g.milli < 1000 ? `${g.index}:${g.milli / 1000}` : `${g.index}`,
    );
    return `replica ${r.replica} on ${nodeName.get(r.nodeId)} GPU ${gpus.join(',')}`;
  });
  return `placed: ${parts.join('; ')}`;
}

/** What the simulated cluster would have held for an allocation, and the tick's view of it. */
function pastAllocation(
  owner: { tenantId: string; teamId: string },
  a: Omit<NewAllocation, 'makeShared'>,
  where: { nodeName: string; gpuIndex: number },
): Omit<PastAllocation, 'startedAt' | 'endedAt'> {
  const claim: GpuClaim = a.migProfile
    ? { ...where, kind: 'mig', profile: a.migProfile, start: a.migStart! }
    : a.milli < 1000
      ? { ...where, kind: 'share', milli: a.milli }
      : { ...where, kind: 'whole' };
  return { gpuId: a.gpuId, nodeId: a.nodeId, gpuModel: a.gpuModel, tenantId: owner.tenantId, teamId: owner.teamId, gpuUnits: a.gpuUnits, claim };
}

/** An inventory node as the engine sees it (empty), with the inventory's GPU ids. */
function inventoryNodeState(n: ReplayNode): NodeState {
  const s = nodeState({ id: n.id, model: n.gpus[0]?.model ?? '', gpus: n.gpus.length, cpuMilli: n.cpuMilli, memoryMiB: n.memoryMiB, migLayout: n.migLayout });
  return { ...s, name: n.name, gpus: s.gpus.map((g, i) => ({ ...g, id: n.gpus[i]!.id, index: n.gpus[i]!.index })) };
}

/**
 * The replayed past gives a few nodes of one MIG-capable model (an eighth of them, the last by
 * name) a layout of its smallest slices, so that MIG notebooks have somewhere to run. The live
 * cluster starts as its inventory says; the MIG manager partitions it from demand.
 */
function withMigPartition(nodes: ReplayNode[]): ReplayNode[] {
  for (const model of MIG_MODELS) {
    const of = nodes.filter((n) => n.gpus.length > 0 && n.gpus.every((g) => g.model === model));
    if (of.length < 4) continue;
    const profile = migProfileOfClass(model, '1g');
    if (!profile) continue;
    const layout: MigLayoutEntry[] = Array.from({ length: 7 }, (_, start) => ({ profile: profile.name, start }));
    if (!validateMigLayout(model, layout).ok) continue;
    const chosen = new Set(of.slice(-Math.ceil(of.length / 8)).map((n) => n.id));
    return nodes.map((n) => (chosen.has(n.id) ? { ...n, migLayout: layout } : n));
  }
  return nodes;
}
