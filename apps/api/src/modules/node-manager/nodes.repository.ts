import { Injectable } from '@nestjs/common';
import { Prisma } from '@gantry/db';
import { PrismaService } from '../../common/prisma.service';
import { EventsRepository, type NewEvent } from '../events/events.repository';

/** First hold of a GPU the cluster refused to start work on; it doubles per refusal in a row up to the max. */
export const REFUSAL_HOLD_MS = 2000;
export const REFUSAL_HOLD_MAX_MS = 5 * 60_000;
/** A refusal this long after the last hold ended starts the back-off over. */
const REFUSAL_RESET_MS = 10 * 60_000;

type NodeStateName = 'ready' | 'cordoned' | 'draining' | 'switching' | 'down';
type DbPersona = 'container' | 'vm_passthrough' | 'inference';
type GpuHealth = 'healthy' | 'degraded' | 'unhealthy';

export const nodeOpsInclude = {
  leaf: { include: { spine: true } },
  gpus: { orderBy: { index: 'asc' }, include: { instances: { orderBy: { start: 'asc' } } } },
} satisfies Prisma.NodeInclude;
export type OpsNode = Prisma.NodeGetPayload<{ include: typeof nodeOpsInclude }>;

/**
 * Nodes and their GPUs for the node manager (failover, MIG, personas, operator actions): lookups,
 * state moves with their events, GPU health. Cluster hardware is cluster-wide (system-scoped).
 */
@Injectable()
export class NodesRepository {
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

  nodeNames() {
    return this.db.node.findMany({ select: { id: true, name: true, state: true } });
  }

  /** Nodes in the middle of a switch or drain (re-enqueued after a restart). */
  nodesInTransition() {
    return this.db.node.findMany({
      where: { state: { in: ['switching', 'draining'] } },
      select: { id: true, state: true, personaTarget: true, transitionStartedAt: true },
    });
  }

  /**
   * Holds GPUs the cluster refused to start work on out of placement: 2 s, doubling with each
   * refusal in a row up to REFUSAL_HOLD_MAX_MS (a refusal long after the last hold ended starts
   * over), with an event per GPU.
   */
  async holdRefusedGpus(gpuIds: string[], why: string, now: Date): Promise<void> {
    await this.db.$transaction(async (tx) => {
      const gpus = await tx.gpu.findMany({
        where: { id: { in: gpuIds } },
        select: { id: true, index: true, nodeId: true, startRefusals: true, startRefusedUntil: true },
      });
      for (const g of gpus) {
        const fresh = !g.startRefusedUntil || now.getTime() - g.startRefusedUntil.getTime() > REFUSAL_RESET_MS;
        const refusals = fresh ? 1 : g.startRefusals + 1;
        const holdMs = Math.min(REFUSAL_HOLD_MAX_MS, REFUSAL_HOLD_MS * 2 ** (refusals - 1));
        await tx.gpu.update({ where: { id: g.id }, data: { startRefusals: refusals, startRefusedUntil: new Date(now.getTime() + holdMs) } });
        await this.events.append(tx, {
          tenantId: null,
          nodeId: g.nodeId,
          type: 'gpu.start.refused',
          message: `GPU ${g.index}: ${why}; out of placement for ${Math.round(holdMs / 1000)} s (refusal ${refusals} in a row)`,
          data: { gpuId: g.id, holdMs },
        });
      }
    });
  }
}
