import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Persona } from '@gantry/contracts';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { CLUSTER_DRIVER, type ClusterDriver } from '../../driver/driver.provider';
import { QueuesService } from '../../queues/queues.service';
import { crashPoint } from '../../common/crash-points';
import type { QueuePayload } from '../../queues/queue-names';
import { JobMover } from './job-mover.service';
import { NodesRepository, type OpsNode } from './nodes.repository';
import { NodeJobsRepository } from './node-jobs.repository';
import { MigChangesRepository } from './mig-changes.repository';

export const personaToDb = (p: Persona) => (p === 'vm-passthrough' ? 'vm_passthrough' : p);

/** Seconds a persona switch takes on this driver (the simulated one says; a real one: minutes). */
export function personaSwitchRealSeconds(driver: ClusterDriver, speed: number): number {
  const sim = (driver as { delays?: { personaSwitchSeconds?: number } }).delays?.personaSwitchSeconds;
  return sim !== undefined ? sim / speed : 240;
}

/**
 * Node operations of the `persona` queue: persona switches (drain, reconfigure through the
 * driver, ready) and the operator's cordon, uncordon and drain mirrored to the driver.
 * Idempotent: each step checks the node's state first; a retry resumes where it stopped.
 */
@Injectable()
export class PersonaService {
  private readonly logger = new Logger('persona');

  constructor(
    private readonly nodes: NodesRepository,
    private readonly nodeJobs: NodeJobsRepository,
    private readonly migChanges: MigChangesRepository,
    private readonly queues: QueuesService,
    private readonly mover: JobMover,
    @Inject(CLUSTER_DRIVER) private readonly driver: ClusterDriver,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async handle(p: QueuePayload<'persona'>): Promise<void> {
    const node = await this.nodes.findNode(p.nodeId);
    if (!node) return;
    switch (p.action) {
      case 'cordon':
        if (node.state === 'cordoned') await this.driver.cordon(node.name);
        return;
      case 'uncordon':
        if (node.state === 'ready') await this.driver.uncordon(node.name);
        await this.queues.requestSchedule(`node ${node.name} uncordoned`);
        return;
      case 'drain':
        return this.drain(node, p.reason ?? 'drained by an operator');
      case 'switch':
        return this.switchPersona(node, p.persona ?? 'container', p.reason ?? 'requested');
      default: {
        const never: never = p.action;
        throw new Error(`unknown persona action ${String(never)}`);
      }
    }
  }

  /** Operator drain: checkpoint and move every job, then the node stays cordoned (drained). */
  private async drain(node: OpsNode, reason: string): Promise<void> {
    if (node.state !== 'draining') return;
    await this.driver.cordon(node.name);
    const jobs = await this.nodeJobs.activeJobsOn({ nodeId: node.id });
    await this.mover.move(jobs, { checkpoint: true, code: 'node_drained', message: `node ${node.name} drained (${reason}): rescheduling elsewhere` });
    if ((await this.nodeJobs.countActiveAllocationsOnNode(node.id)) > 0) throw new Error(`node ${node.name} still holds work`);
    await this.nodes.setNodeState(
      node.id,
      ['draining'],
      { state: 'cordoned', reason: `drained: ${reason}`, transitionStartedAt: null, transitionEtaAt: null },
      {
        type: 'node.drained',
        message: `${node.name} drained: ${jobs.length} job(s) moved; the node stays cordoned`,
      },
    );
  }

  /**
   * Switch: the node takes no work (state `switching`), its jobs are checkpointed and moved,
   * MIG is turned off for a VM persona, the driver reconfigures the node (minutes), then the
   * node is ready in its new persona.
   */
  private async switchPersona(node: OpsNode, persona: Persona, reason: string): Promise<void> {
    const target = personaToDb(persona);
    if (node.state !== 'switching' || node.personaTarget !== target) {
      if (node.persona === target && node.state !== 'switching') return;
      const now = new Date();
      const eta = new Date(now.getTime() + personaSwitchRealSeconds(this.driver, this.config.driver.simSpeed) * 1000);
      const ok = await this.nodes.setNodeState(
        node.id,
        ['ready', 'cordoned'],
        { state: 'switching', reason: `switching to ${persona} (${reason})`, personaTarget: target, transitionStartedAt: now, transitionEtaAt: eta },
        {
          type: 'node.persona.switching',
          message: `${node.name}: switching persona ${node.persona.replace('_', '-')} -> ${persona} (${reason}); draining, ETA ${eta.toISOString()}`,
          data: { persona },
        },
      );
      if (!ok) return this.logger.warn(`${node.name} is ${node.state}: persona switch to ${persona} skipped`);
    }
    await this.driver.cordon(node.name).catch(() => undefined);
    const jobs = await this.nodeJobs.activeJobsOn({ nodeId: node.id });
    await this.mover.move(jobs, {
      checkpoint: true,
      code: 'persona_switch',
      message: `node ${node.name} switches to the ${persona} persona: rescheduling elsewhere`,
    });
    if ((await this.nodeJobs.countActiveAllocationsOnNode(node.id)) > 0) throw new Error(`node ${node.name} still holds work`);
    if (persona === 'vm-passthrough') {
      // VMs take whole GPUs: MIG goes off first (the slices are idle: the node is drained). The
      // driver's layout counts, not only the database's: a worker killed after the driver
      // applied a layout and before the database recorded it leaves the two apart. MIG changes
      // still in flight on the node are dropped (committing "off" clears their target).
      const seen = await this.driver.discoverNode(node.name);
      for (const gpu of node.gpus) {
        const actual = seen?.gpus[gpu.index]?.migLayout ?? [];
        if (gpu.mode !== 'mig' && !actual.length && gpu.migTarget === null) continue;
        if (actual.length) await this.driver.applyMigLayout(node.name, gpu.index, []);
        await this.migChanges.commitMigLayout(gpu.id, [], new Date());
      }
    }
    crashPoint('persona.requested');
    await this.driver.setPersona(node.name, persona);
    crashPoint('persona.switched');
    const ok = await this.nodes.setNodeState(
      node.id,
      ['switching'],
      { state: 'ready', reason: null, persona: target, personaTarget: null, personaChangedAt: new Date(), transitionStartedAt: null, transitionEtaAt: null },
      {
        type: 'node.persona.switched',
        message: `${node.name} now runs the ${persona} persona${jobs.length ? `; ${jobs.length} job(s) were moved` : ''}`,
        data: { persona },
      },
    );
    if (ok) {
      await this.driver.uncordon(node.name).catch(() => undefined);
      await this.queues.requestSchedule(`node ${node.name} switched to ${persona}`);
    }
  }
}
