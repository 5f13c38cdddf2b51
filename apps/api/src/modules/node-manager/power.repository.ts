import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../common/prisma.service';
import { EventsRepository } from '../events/events.repository';

type DbPowerState = 'on' | 'powering_down' | 'off' | 'powering_up';

/** Why a power change could not begin: the node holds work, or it is not in a state to change. */
export type PowerChangeRefusal = { refused: 'holds-work'; allocations: number } | { refused: 'state'; powerState: DbPowerState; state: string };

/**
 * Node power states in Postgres (docs/power.md), with their events and the spans nodes were off
 * (energy accounting). A power-down begins under a row lock on the node, the lock placement
 * takes too (takeGpuSlots): a job cannot be placed on a node going down, and a node that just
 * took a job does not go down.
 */
@Injectable()
export class PowerRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly events: EventsRepository,
  ) {}

  private get db() {
    return this.prisma.client;
  }

  /** on -> powering-down when the node holds no work (checked under the node's row lock). */
  async beginPowerDown(nodeId: string, reason: string, now: Date): Promise<true | PowerChangeRefusal> {
    return this.db.$transaction(async (tx) => {
      const [node] = await tx.$queryRaw<{ name: string; state: string; powerState: DbPowerState }[]>`
        SELECT name, state::text AS state, "powerState"::text AS "powerState" FROM "Node" WHERE id = ${nodeId} FOR UPDATE`;
      if (!node) return { refused: 'state', powerState: 'off', state: 'unknown' } as const;
      if (node.powerState !== 'on' || !['ready', 'cordoned'].includes(node.state)) {
        return { refused: 'state', powerState: node.powerState, state: node.state } as const;
      }
      const allocations = await tx.allocation.count({ where: { nodeId, endedAt: null } });
      if (allocations > 0) return { refused: 'holds-work', allocations } as const;
      await tx.node.update({ where: { id: nodeId }, data: { powerState: 'powering_down', powerChangedAt: now, version: { increment: 1 } } });
      await this.events.append(tx, { tenantId: null, nodeId, type: 'node.power.powering-down', message: `${node.name} powering down (${reason})` });
      return true;
    });
  }

  /** off -> powering-up (the span off ends: a booting node draws idle power). */
  async beginPowerUp(nodeId: string, reason: string, now: Date): Promise<boolean> {
    return this.db.$transaction(async (tx) => {
      const r = await tx.node.updateMany({
        where: { id: nodeId, powerState: 'off' },
        data: { powerState: 'powering_up', powerChangedAt: now, version: { increment: 1 } },
      });
      if (r.count !== 1) return false;
      await tx.nodePowerOff.updateMany({ where: { nodeId, endedAt: null }, data: { endedAt: now } });
      const node = await tx.node.findUniqueOrThrow({ where: { id: nodeId }, select: { name: true } });
      await this.events.append(tx, { tenantId: null, nodeId, type: 'node.power.powering-up', message: `${node.name} powering up (${reason})` });
      return true;
    });
  }

  /** powering-down -> off, opening a span off; or powering-up -> off when the node did not come up. */
  async markOff(nodeId: string, from: 'powering_down' | 'powering_up', savedW: number, message: string, now: Date): Promise<boolean> {
    return this.db.$transaction(async (tx) => {
      const r = await tx.node.updateMany({
        where: { id: nodeId, powerState: from },
        data: { powerState: 'off', powerChangedAt: now, version: { increment: 1 } },
      });
      if (r.count !== 1) return false;
      await tx.nodePowerOff.create({ data: { nodeId, startedAt: now, savedW } });
      await this.events.append(tx, {
        tenantId: null,
        nodeId,
        type: from === 'powering_down' ? 'node.power.off' : 'node.power.up-failed',
        message,
      });
      return true;
    });
  }

  /** powering-up or powering-down -> on (booted, or a shutdown the driver refused). */
  async markOn(nodeId: string, from: 'powering_down' | 'powering_up', message: string, now: Date): Promise<boolean> {
    return this.db.$transaction(async (tx) => {
      const r = await tx.node.updateMany({
        where: { id: nodeId, powerState: from },
        data: { powerState: 'on', powerChangedAt: now, version: { increment: 1 } },
      });
      if (r.count !== 1) return false;
      await this.events.append(tx, { tenantId: null, nodeId, type: 'node.power.on', message });
      return true;
    });
  }

  /** Nodes in the middle of a power change (their queue work is re-derived after a restart). */
  nodesPowering() {
    return this.db.node.findMany({
      where: { powerState: { in: ['powering_down', 'powering_up'] } },
      select: { id: true, powerState: true, powerChangedAt: true },
    });
  }

  /** When each node's last allocation ended (a node is empty since then, or since it came on). */
  async lastWorkEndedAt(): Promise<Map<string, Date>> {
    const rows = await this.db.allocation.groupBy({ by: ['nodeId'], _max: { endedAt: true } });
    return new Map(rows.filter((r) => r._max.endedAt).map((r) => [r.nodeId, r._max.endedAt!]));
  }

  /** Nodes with an open power-up failure (the policy does not boot them again; an operator looks first). */
  async nodesFailedToPowerUp(): Promise<Set<string>> {
    const rows = await this.db.incident.findMany({ where: { kind: 'power-up-fail', resolvedAt: null, nodeId: { not: null } }, select: { nodeId: true } });
    return new Set(rows.map((r) => r.nodeId!));
  }
}
