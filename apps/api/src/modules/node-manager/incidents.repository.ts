import { Injectable } from '@nestjs/common';
import { Prisma } from '@gantry/db';
import { PrismaService } from '../../common/prisma.service';
import { isUniqueViolation } from '../../common/prisma-errors';
import { EventsRepository } from '../events/events.repository';

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
  /** Burn-in steps: the verdict per GPU and how long the diagnostic ran. */
  findings?: { gpuIndex: number; result: 'pass' | 'fail'; detail: string }[];
  durationSeconds?: number;
}

export interface IncidentPatch {
  state?: string;
  /** Changes the state only from this one (a step that raced a later transition leaves it). */
  stateFrom?: string;
  mitigatedAt?: Date;
  attempts?: number;
  remediation?: string;
  burnInFailures?: number;
  /** null clears it (no burn-in running). */
  burnInJobId?: string | null;
  burnInStartedAt?: Date | null;
}

/**
 * Incidents of the failover loop: one open per fault and target, a timeline, MTTR. Cluster-wide
 * (system-scoped); the API filters incidents by tenant.
 */
@Injectable()
export class IncidentsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly events: EventsRepository,
  ) {}

  private get db() {
    return this.prisma.client;
  }

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
        await this.events.append(tx, {
          tenantId: null,
          nodeId: n.nodeId ?? undefined,
          type: 'incident.opened',
          message: n.summary,
          data: { incidentId: inc.id, kind: n.kind, xid: n.xid },
        });
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
  async incidentStep(id: string, steps: IncidentStep[], patch: IncidentPatch = {}): Promise<void> {
    if (patch.stateFrom && patch.state) {
      await this.db.incident.updateMany({ where: { id, resolvedAt: null, state: patch.stateFrom }, data: { state: patch.state } });
      patch = { ...patch, state: undefined };
    }
    if (steps.length) {
      await this.db.$executeRaw`UPDATE "Incident" SET timeline = timeline || ${JSON.stringify(steps)}::jsonb WHERE id = ${id}`;
    }
    const data: Prisma.IncidentUpdateManyMutationInput = {};
    if (patch.state) data.state = patch.state;
    if (patch.mitigatedAt) data.mitigatedAt = patch.mitigatedAt;
    if (patch.attempts !== undefined) data.attempts = patch.attempts;
    if (patch.remediation) data.remediation = patch.remediation;
    if (patch.burnInFailures !== undefined) data.burnInFailures = patch.burnInFailures;
    if (patch.burnInJobId !== undefined) data.burnInJobId = patch.burnInJobId;
    if (patch.burnInStartedAt !== undefined) data.burnInStartedAt = patch.burnInStartedAt;
    if (Object.keys(data).length) await this.db.incident.updateMany({ where: { id, resolvedAt: null }, data });
  }

  /**
   * A burn-in starts: state `burn-in` with its workload, unless one is already running (a
   * concurrent remediate step started it). False when another got there first.
   */
  async beginBurnIn(id: string, jobId: string, at: Date, started: IncidentStep): Promise<boolean> {
    const n = await this.db.$executeRaw`
      UPDATE "Incident" SET state = 'burn-in', "burnInJobId" = ${jobId}, "burnInStartedAt" = ${at}, timeline = timeline || ${JSON.stringify([started])}::jsonb
      WHERE id = ${id} AND "resolvedAt" IS NULL AND "burnInJobId" IS NULL AND state NOT IN ('burn-in', 'needs-attention', 'failed')`;
    return n === 1;
  }

  /**
   * Takes the verdict of a burn-in run, in one statement: its steps, the state and failure count
   * it leaves, and the run cleared. Once per run: a concurrent check of the same run, or one that
   * read the incident before, sees false and changes nothing, so no reader ever sees the run
   * cleared with the verdict still unwritten. `jobId` null takes an incident left in `burn-in`
   * without a run. `state` omitted keeps `burn-in` (a pass, on its way back into service).
   */
  async endBurnIn(id: string, jobId: string | null, steps: IncidentStep[], patch: { state?: string; burnInFailures?: number } = {}): Promise<boolean> {
    const n = await this.db.$executeRaw`
      UPDATE "Incident" SET "burnInJobId" = NULL, timeline = timeline || ${JSON.stringify(steps)}::jsonb,
        state = COALESCE(${patch.state ?? null}::text, state), "burnInFailures" = COALESCE(${patch.burnInFailures ?? null}::int, "burnInFailures")
      WHERE id = ${id} AND "resolvedAt" IS NULL AND state = 'burn-in' AND "burnInJobId" IS NOT DISTINCT FROM ${jobId}::text`;
    return n === 1;
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
    return this.db.$transaction(async (tx) => {
      // once: a concurrent close of the same loop finds it resolved and writes nothing
      const [inc] = await tx.$queryRaw<{ nodeId: string | null; summary: string; detectedAt: Date }[]>`
        UPDATE "Incident" SET timeline = timeline || ${JSON.stringify([step])}::jsonb, state = 'resolved', "resolvedAt" = ${now}, "openKey" = NULL,
          "mitigatedAt" = COALESCE("mitigatedAt", ${now})
        WHERE id = ${id} AND "resolvedAt" IS NULL
        RETURNING "nodeId", summary, "detectedAt"`;
      if (!inc) return false;
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

  /** Open incidents whose loop is not closed (re-enqueued after a restart); those waiting for a person are left alone. */
  openIncidents() {
    return this.db.incident.findMany({
      where: { resolvedAt: null, state: { notIn: ['failed', 'needs-attention'] } },
      select: { id: true, detectedAt: true, nodeId: true },
    });
  }
}
