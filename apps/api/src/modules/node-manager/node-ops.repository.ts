import { Injectable } from '@nestjs/common';
import { Prisma } from '@gantry/db';
import { PrismaService } from '../../common/prisma.service';
import { isUniqueViolation } from '../../common/prisma-errors';
import { EventsRepository, type NewEvent } from '../events/events.repository';
import { releaseAllocations } from '../jobs/jobs.repository';

type NodeStateName = 'ready' | 'cordoned' | 'draining' | 'switching' | 'down';
type DbPersona = 'container' | 'vm_passthrough' | 'inference';
type GpuHealth = 'healthy' | 'degraded' | 'unhealthy';

const ACTIVE = { endedAt: null } as const;
const RUNNING_STATES = ['starting', 'running'] as const;

export const nodeOpsInclude = {
  leaf: { include: { spine: true } },
  gpus: { orderBy: { index: 'asc' }, include: { instances: { orderBy: { start: 'asc' } } } },
} satisfies Prisma.NodeInclude;
export type OpsNode = Prisma.NodeGetPayload<{ include: typeof nodeOpsInclude }>;

export interface ActiveJob {
  id: string;
  tenantId: string;
  state: string;
  kind: string;
  progressSeconds: number;
  runningSince: Date | null;
  checkpoint: string | null;
  /** Nodes the job's replicas hold GPUs on (a gang over several nodes is multi-node work). */
  nodeIds: string[];
}

export interface NewIncident {
  openKey: string;
  kind: string;
  severity: string;
  scope: string;
  remediation: string;
  summary: string;
  nodeId: string | null;
  gpuId: string | null;
  xid?: number;
  detectedAt: Date;
}

export interface IncidentStep {
  at: string;
  step: string;
  message: string;
}

/**
 * Node and GPU state for the node manager (failover, MIG, personas, operator actions). Cluster
 * hardware and incidents are cluster-wide (system-scoped); job rows it touches are moved by id
 * on behalf of the cluster, never read for a tenant (the API filters incidents by tenant).
 */
@Injectable()
export class NodeOpsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly events: EventsRepository,
  ) {}

  private get db() {
    return this.prisma.client;
  }

  findNode(idOrName: string) {
    return this.db.node.findFirst({ where: { OR: [{ id: idOrName }, { name: idOrName }] }, include: nodeOpsInclude });
  }

  findGpu(gpuId: string) {
    return this.db.gpu.findUnique({ where: { id: gpuId }, include: { node: true, instances: { orderBy: { start: 'asc' } } } });
  }

  /**
   * Moves a node between states when it is in one of `from` (a state check, so a retry or a
   * concurrent change does no harm), with its event. False when the node was not in `from`.
   */
  async setNodeState(
    nodeId: string,
    from: NodeStateName[],
    to: {
      state: NodeStateName;
      reason: string | null;
      personaTarget?: DbPersona | null;
      persona?: DbPersona;
      personaChangedAt?: Date;
      transitionStartedAt?: Date | null;
      transitionEtaAt?: Date | null;
    },
    event: Omit<NewEvent, 'tenantId' | 'nodeId'>,
  ): Promise<boolean> {
    return this.db.$transaction(async (tx) => {
      const r = await tx.node.updateMany({
        where: { id: nodeId, state: { in: from } },
        data: {
          state: to.state,
          stateReason: to.reason,
          version: { increment: 1 },
          ...(to.personaTarget !== undefined ? { personaTarget: to.personaTarget } : {}),
          ...(to.persona !== undefined ? { persona: to.persona } : {}),
          ...(to.personaChangedAt !== undefined ? { personaChangedAt: to.personaChangedAt } : {}),
          ...(to.transitionStartedAt !== undefined ? { transitionStartedAt: to.transitionStartedAt } : {}),
          ...(to.transitionEtaAt !== undefined ? { transitionEtaAt: to.transitionEtaAt } : {}),
        },
      });
      if (r.count !== 1) return false;
      await this.events.append(tx, { ...event, tenantId: null, nodeId });
      return true;
    });
  }

  /** Sets a GPU's health (quarantine or back in service), with its event; false when unchanged. */
  async setGpuHealth(gpuId: string, health: GpuHealth, event: Omit<NewEvent, 'tenantId'>): Promise<boolean> {
    return this.db.$transaction(async (tx) => {
      const r = await tx.gpu.updateMany({ where: { id: gpuId, health: { not: health } }, data: { health, version: { increment: 1 } } });
      if (r.count !== 1) return false;
      await this.events.append(tx, { ...event, tenantId: null });
      return true;
    });
  }

  async setAllGpusHealthy(nodeId: string): Promise<number> {
    const r = await this.db.gpu.updateMany({ where: { nodeId, health: { not: 'healthy' } }, data: { health: 'healthy', version: { increment: 1 } } });
    return r.count;
  }

  /** Jobs holding GPUs on a node (or one GPU of it), with every node each job spans. */
  async activeJobsOn(where: { nodeId: string; gpuId?: string }): Promise<ActiveJob[]> {
    const allocs = await this.db.allocation.findMany({
      where: { AND: [ACTIVE, { nodeId: where.nodeId }, where.gpuId ? { gpuId: where.gpuId } : {}, { jobId: { not: null } }] },
      select: { jobId: true },
      distinct: ['jobId'],
    });
    const ids = allocs.map((a) => a.jobId!);
    if (!ids.length) return [];
    const jobs = await this.db.job.findMany({
      where: { id: { in: ids } },
      select: {
        id: true,
        tenantId: true,
        state: true,
        kind: true,
        progressSeconds: true,
        runningSince: true,
        checkpoint: true,
        allocations: { where: ACTIVE, select: { nodeId: true } },
      },
      orderBy: { id: 'asc' },
    });
    return jobs.map(({ allocations, ...j }) => ({ ...j, nodeIds: [...new Set(allocations.map((a) => a.nodeId))] }));
  }

  /** Job allocations still on a node (endpoint replicas are the endpoints module's to move). */
  countActiveAllocationsOnNode(nodeId: string) {
    return this.db.allocation.count({ where: { nodeId, endedAt: null, jobId: { not: null } } });
  }

  findJob(jobId: string) {
    return this.db.job.findUnique({
      where: { id: jobId },
      select: {
        id: true,
        tenantId: true,
        state: true,
        progressSeconds: true,
        runningSince: true,
        checkpoint: true,
        allocations: { where: ACTIVE, select: { nodeId: true, gpuId: true, startedAt: true } },
      },
    });
  }

  /**
   * Returns a job the cluster took away (or that failover moves) to `pending`: all its replicas
   * at once (a gang moves as a whole), its GPUs released in the same transaction, its progress
   * and checkpoint kept, the reason recorded. The normal scheduling cycle places it again.
   * State-checked: false when the job is no longer starting or running.
   */
  requeueJob(jobId: string, reason: { code: string; message: string }, progress: { progressSeconds: number; checkpoint?: string | null }, now: Date): Promise<boolean> {
    return this.db.$transaction(async (tx) => {
      const job = await tx.job.findUnique({ where: { id: jobId } });
      if (!job || !(RUNNING_STATES as readonly string[]).includes(job.state)) return false;
      const moved = await tx.job.updateMany({
        where: { id: jobId, state: { in: [...RUNNING_STATES] } },
        data: {
          state: 'pending',
          runningSince: null,
          version: { increment: 1 },
          progressSeconds: Math.max(job.progressSeconds, progress.progressSeconds),
          ...(progress.checkpoint ? { checkpoint: progress.checkpoint } : {}),
          reasons: [{ code: reason.code, message: reason.message }],
        },
      });
      if (moved.count !== 1) return false;
      const released = await releaseAllocations(tx, jobId, now);
      await this.events.append(tx, {
        tenantId: job.tenantId,
        jobId,
        type: 'job.rescheduled',
        message: `${reason.message}; ${released} GPU allocation(s) released, progress ${Math.round(Math.max(job.progressSeconds, progress.progressSeconds))} s kept${progress.checkpoint ? ' (checkpoint)' : ''}`,
        data: { code: reason.code },
      });
      return true;
    });
  }

  /**
   * When every job of the list was running again (the latest runningSince), or had ended;
   * null while one still waits. An empty list is mitigated now.
   */
  async jobsBackAt(jobIds: string[]): Promise<Date | null> {
    if (!jobIds.length) return new Date();
    const jobs = await this.db.job.findMany({ where: { id: { in: jobIds } }, select: { state: true, runningSince: true, finishedAt: true } });
    let latest = 0;
    for (const j of jobs) {
      if (j.state === 'running' && j.runningSince) latest = Math.max(latest, j.runningSince.getTime());
      else if (['succeeded', 'failed', 'cancelled'].includes(j.state) && j.finishedAt) latest = Math.max(latest, j.finishedAt.getTime());
      else return null;
    }
    return new Date(latest || Date.now());
  }

  // ---- incidents -------------------------------------------------------------------------

  /** Opens an incident, or returns the one already open for the same fault and target. */
  async openIncident(n: NewIncident, firstStep: IncidentStep): Promise<{ id: string; created: boolean }> {
    const existing = await this.db.incident.findUnique({ where: { openKey: n.openKey }, select: { id: true } });
    if (existing) return { id: existing.id, created: false };
    try {
      const row = await this.db.$transaction(async (tx) => {
        const inc = await tx.incident.create({
          data: {
            openKey: n.openKey,
            kind: n.kind,
            severity: n.severity,
            scope: n.scope,
            remediation: n.remediation,
            summary: n.summary,
            nodeId: n.nodeId,
            gpuId: n.gpuId,
            xid: n.xid ?? null,
            detectedAt: n.detectedAt,
            timeline: [firstStep] as unknown as Prisma.InputJsonValue,
          },
        });
        await this.events.append(tx, { tenantId: null, nodeId: n.nodeId ?? undefined, type: 'incident.opened', message: n.summary, data: { incidentId: inc.id, kind: n.kind, xid: n.xid } });
        return inc;
      });
      return { id: row.id, created: true };
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      const again = await this.db.incident.findUnique({ where: { openKey: n.openKey }, select: { id: true } });
      if (!again) throw e;
      return { id: again.id, created: false };
    }
  }

  findIncident(id: string) {
    return this.db.incident.findUnique({ where: { id } });
  }

  openIncidentsOn(nodeId: string) {
    return this.db.incident.findMany({ where: { nodeId, resolvedAt: null }, orderBy: { detectedAt: 'asc' } });
  }

  /** Appends steps to the timeline atomically (concurrent steps never overwrite each other). */
  async incidentStep(id: string, steps: IncidentStep[], patch: { state?: string; mitigatedAt?: Date; attempts?: number; remediation?: string } = {}): Promise<void> {
    if (steps.length) {
      await this.db.$executeRaw`UPDATE "Incident" SET timeline = timeline || ${JSON.stringify(steps)}::jsonb WHERE id = ${id}`;
    }
    const data: Prisma.IncidentUpdateManyMutationInput = {};
    if (patch.state) data.state = patch.state;
    if (patch.mitigatedAt) data.mitigatedAt = patch.mitigatedAt;
    if (patch.attempts !== undefined) data.attempts = patch.attempts;
    if (patch.remediation) data.remediation = patch.remediation;
    if (Object.keys(data).length) await this.db.incident.updateMany({ where: { id, resolvedAt: null }, data });
  }

  /** Records the jobs an incident moved, deduplicated; tenantIds[i] is the tenant of jobIds[i]. */
  async incidentJobs(id: string, jobs: { id: string; tenantId: string }[]): Promise<void> {
    if (!jobs.length) return;
    await this.db.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM "Incident" WHERE id = ${id} FOR UPDATE`;
      const inc = await tx.incident.findUnique({ where: { id }, select: { jobIds: true, tenantIds: true } });
      if (!inc) return;
      const jobIds = [...inc.jobIds];
      const tenantIds = [...inc.tenantIds];
      for (const j of jobs) {
        if (jobIds.includes(j.id)) continue;
        jobIds.push(j.id);
        tenantIds.push(j.tenantId);
      }
      await tx.incident.update({ where: { id }, data: { jobIds, tenantIds } });
    });
  }

  /** Closes the loop: resolved, MTTR fixed by resolvedAt, the open key freed for a next fault. */
  async resolveIncident(id: string, step: IncidentStep, now: Date): Promise<boolean> {
    await this.db.$executeRaw`UPDATE "Incident" SET timeline = timeline || ${JSON.stringify([step])}::jsonb WHERE id = ${id} AND "resolvedAt" IS NULL`;
    return this.db.$transaction(async (tx) => {
      const inc = await tx.incident.findUnique({ where: { id } });
      if (!inc || inc.resolvedAt) return false;
      await tx.incident.update({ where: { id }, data: { state: 'resolved', resolvedAt: now, openKey: null, mitigatedAt: inc.mitigatedAt ?? now } });
      await this.events.append(tx, {
        tenantId: null,
        nodeId: inc.nodeId ?? undefined,
        type: 'incident.resolved',
        message: `${inc.summary}: resolved in ${((now.getTime() - inc.detectedAt.getTime()) / 1000).toFixed(1)} s`,
        data: { incidentId: id },
      });
      return true;
    });
  }

  async failIncident(id: string, step: IncidentStep): Promise<void> {
    await this.incidentStep(id, [step], { state: 'failed' });
  }

  listIncidents(q: { limit: number; cursor?: string }, filter: { state?: string; nodeId?: string }) {
    return this.db.incident.findMany({
      where: {
        AND: [q.cursor ? { id: { lt: q.cursor } } : {}, filter.state ? { state: filter.state } : {}, filter.nodeId ? { nodeId: filter.nodeId } : {}],
      },
      orderBy: { id: 'desc' },
      take: q.limit + 1,
    });
  }

  /** Names, ids and GPU indexes of nodes and GPUs referenced by incidents (for presenting them). */
  async incidentTargets(nodeIds: string[], gpuIds: string[]) {
    const [nodes, gpus] = await Promise.all([
      this.db.node.findMany({ where: { id: { in: nodeIds } }, select: { id: true, name: true } }),
      this.db.gpu.findMany({ where: { id: { in: gpuIds } }, select: { id: true, index: true, health: true } }),
    ]);
    return { nodes: new Map(nodes.map((n) => [n.id, n.name])), gpus: new Map(gpus.map((g) => [g.id, g])) };
  }

  // ---- heartbeats ------------------------------------------------------------------------

  nodeNames() {
    return this.db.node.findMany({ select: { id: true, name: true, state: true } });
  }

  async touchHeartbeats(names: string[], at: Date): Promise<void> {
    if (!names.length) return;
    await this.db.node.updateMany({ where: { name: { in: names } }, data: { heartbeatAt: at } });
  }

  // ---- MIG -------------------------------------------------------------------------------

  /** Takes the GPU out of scheduling and records the layout being applied. */
  async beginMigChange(gpuId: string, layout: { profile: string; start: number }[], reason: string, now: Date): Promise<void> {
    await this.db.$transaction(async (tx) => {
      const gpu = await tx.gpu.findUniqueOrThrow({ where: { id: gpuId } });
      const same = JSON.stringify(gpu.migTarget) === JSON.stringify(layout);
      await tx.gpu.update({
        where: { id: gpuId },
        data: { schedulable: false, migTarget: layout as unknown as Prisma.InputJsonValue, ...(same && gpu.migRequestedAt ? {} : { migRequestedAt: now }), version: { increment: 1 } },
      });
      if (!same) {
        const text = layout.length ? layout.map((e) => `${e.profile}@${e.start}`).join(', ') : 'MIG off';
        await this.events.append(tx, { tenantId: null, nodeId: gpu.nodeId, type: 'gpu.mig.requested', message: `GPU ${gpu.index}: MIG layout ${text} requested (${reason}); GPU out of scheduling`, data: { gpuId, layout } });
      }
    });
  }

  /** Active allocations on a GPU: its whole-GPU holder or the MIG slices in use (by start). */
  gpuAllocations(gpuId: string) {
    return this.db.allocation.findMany({ where: { gpuId, endedAt: null }, select: { jobId: true, migStart: true, migProfile: true, milli: true } });
  }

  /**
   * Stores a verified layout: slices destroyed, slices created, mode, back in scheduling. Under
   * the GPU row lock, refuses (false) when a slice being destroyed holds an allocation.
   */
  commitMigLayout(gpuId: string, layout: { profile: string; start: number; size: number }[], now: Date): Promise<boolean> {
    return this.db.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM "Gpu" WHERE id = ${gpuId} FOR UPDATE`;
      const gpu = await tx.gpu.findUniqueOrThrow({ where: { id: gpuId }, include: { instances: true } });
      const keep = (p: string, s: number) => layout.some((e) => e.profile === p && e.start === s);
      const gone = gpu.instances.filter((i) => !keep(i.profile, i.start));
      const busy = await tx.allocation.findMany({ where: { gpuId, endedAt: null }, select: { migStart: true, migProfile: true } });
      if (busy.some((a) => a.migStart === null || gone.some((i) => i.start === a.migStart))) return false;
      if (gone.length) await tx.gpuInstance.deleteMany({ where: { id: { in: gone.map((i) => i.id) } } });
      const fresh = layout.filter((e) => !gpu.instances.some((i) => i.profile === e.profile && i.start === e.start));
      if (fresh.length) await tx.gpuInstance.createMany({ data: fresh.map((e) => ({ gpuId, profile: e.profile, start: e.start, size: e.size })) });
      await tx.gpu.update({
        where: { id: gpuId },
        data: { mode: layout.length ? 'mig' : 'whole', schedulable: true, migTarget: Prisma.DbNull, migRequestedAt: null, migChangedAt: now, version: { increment: 1 } },
      });
      const text = layout.length ? layout.map((e) => `${e.profile}@${e.start}`).join(', ') : 'MIG off (whole GPU)';
      await this.events.append(tx, { tenantId: null, nodeId: gpu.nodeId, type: 'gpu.mig.applied', message: `GPU ${gpu.index}: MIG layout ${text} applied and verified; back in scheduling`, data: { gpuId, layout } });
      return true;
    });
  }

  /** Gives up a change (timeout, refusal): the GPU goes back to scheduling with its old layout. */
  async abandonMigChange(gpuId: string, why: string): Promise<void> {
    await this.db.$transaction(async (tx) => {
      const gpu = await tx.gpu.findUniqueOrThrow({ where: { id: gpuId } });
      await tx.gpu.update({ where: { id: gpuId }, data: { schedulable: true, migTarget: Prisma.DbNull, migRequestedAt: null, version: { increment: 1 } } });
      await this.events.append(tx, { tenantId: null, nodeId: gpu.nodeId, type: 'gpu.mig.abandoned', message: `GPU ${gpu.index}: MIG change abandoned: ${why}`, data: { gpuId } });
    });
  }

  /** GPUs with a MIG change in flight (the reconciler re-enqueues them after a restart). */
  gpusWithMigTarget() {
    return this.db.gpu.findMany({ where: { migTarget: { not: Prisma.DbNull } }, select: { id: true, migTarget: true, migRequestedAt: true } });
  }

  /** Nodes in the middle of a switch or drain (re-enqueued after a restart). */
  nodesInTransition() {
    return this.db.node.findMany({ where: { state: { in: ['switching', 'draining'] } }, select: { id: true, state: true, personaTarget: true, transitionStartedAt: true } });
  }

  /** Open incidents whose loop is not closed (re-enqueued after a restart). */
  openIncidents() {
    return this.db.incident.findMany({ where: { resolvedAt: null, state: { not: 'failed' } }, select: { id: true, detectedAt: true, nodeId: true } });
  }

  // ---- planning inputs ---------------------------------------------------------------------

  /** Pending jobs (quota-held jobs excluded), `tried` once a cycle failed to place them: demand for planners. */
  async unplacedPendingJobs() {
    const rows = await this.db.job.findMany({
      where: { state: 'pending' },
      select: { id: true, kind: true, replicas: true, resources: true, reasons: true, createdAt: true },
      orderBy: { createdAt: 'asc' },
      take: 5000,
    });
    return rows
      .map((r) => {
        const codes = ((r.reasons as { code?: string }[] | null) ?? []).map((x) => x.code);
        return { ...r, quotaHeld: codes.includes('quota_limit'), tried: !codes.includes('queued') };
      })
      .filter((r) => !r.quotaHeld);
  }
}
