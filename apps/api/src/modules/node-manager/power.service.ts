import { Inject, Injectable, Logger } from '@nestjs/common';
import { nodePower, savedW } from '@gantry/scheduler';
import { CLUSTER_DRIVER, type ClusterDriver } from '../../driver/driver.provider';
import { QueuesService } from '../../queues/queues.service';
import type { QueuePayload } from '../../queues/queue-names';
import { IncidentsRepository } from './incidents.repository';
import { NodesRepository, type OpsNode } from './nodes.repository';
import { PowerRepository } from './power.repository';

const step = (s: string, message: string, at = new Date()) => ({ at: at.toISOString(), step: s, message });

/** The draw a node saves while off rather than on and idle, W (docs/power.md). */
export function nodeSavedW(node: Pick<OpsNode, 'gpus'>): number {
  return savedW(nodePower({ model: node.gpus[0]?.model ?? '', gpus: node.gpus.length }));
}

/**
 * The `power` queue (worker): carries a power change begun in Postgres out through the driver.
 * Off: the driver cordons and powers the node off, then it is off. On: the driver boots it; once
 * up it is on and takes work; a node that does not come up goes back to off and opens a
 * `power-up-fail` incident (resolved when a later power-on succeeds).
 */
@Injectable()
export class PowerService {
  private readonly logger = new Logger('power');

  constructor(
    private readonly nodes: NodesRepository,
    private readonly power: PowerRepository,
    private readonly incidents: IncidentsRepository,
    private readonly queues: QueuesService,
    @Inject(CLUSTER_DRIVER) private readonly driver: ClusterDriver,
  ) {}

  async handle(p: QueuePayload<'power'>): Promise<void> {
    const node = await this.nodes.findNode(p.nodeId);
    if (!node) return;
    return p.action === 'off' ? this.powerOff(node, p.reason ?? 'requested') : this.powerOn(node, p.reason ?? 'requested');
  }

  private async powerOff(node: OpsNode, reason: string): Promise<void> {
    if (node.powerState !== 'powering_down') return;
    try {
      await this.driver.setPower(node.name, 'off');
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      this.logger.warn(`${node.name}: power-off refused: ${why}`);
      await this.power.markOn(node.id, 'powering_down', `${node.name} stays on: the power-off failed (${why})`, new Date());
      await this.queues.requestSchedule(`node ${node.name} stayed on`);
      return;
    }
    await this.power.markOff(node.id, 'powering_down', nodeSavedW(node), `${node.name} powered off (${reason})`, new Date());
  }

  private async powerOn(node: OpsNode, reason: string): Promise<void> {
    if (node.powerState !== 'powering_up') return;
    try {
      await this.driver.setPower(node.name, 'on');
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      const now = new Date();
      this.logger.warn(`${node.name}: power-on failed: ${why}`);
      // the incident first: the policy skips a node with an open power-up failure, and must
      // never see this node off without it (it would boot it again at once)
      const summary = `${node.name} did not come up after power-on`;
      const inc = await this.incidents.openIncident(
        {
          openKey: `power-up-fail:${node.id}`,
          kind: 'power-up-fail',
          severity: 'high',
          scope: 'node',
          remediation: 'none',
          summary,
          nodeId: node.id,
          gpuId: null,
          detectedAt: now,
        },
        step('detected', `${summary} (${reason}): ${why}`, now),
      );
      if (await this.power.markOff(node.id, 'powering_up', nodeSavedW(node), `${node.name} did not come up: ${why}`, now)) {
        await this.incidents.incidentStep(inc.id, [
          step('waiting', `${node.name} stays off; power management will not boot it again until an operator powers it on`, now),
        ]);
      }
      return;
    }
    const now = new Date();
    await this.power.markOn(node.id, 'powering_up', `${node.name} powered on (${reason})`, now);
    for (const inc of (await this.incidents.openIncidentsOn(node.id)).filter((i) => i.kind === 'power-up-fail')) {
      await this.incidents.resolveIncident(inc.id, step('resolved', `${node.name} came up after a new power-on`, now), now);
    }
    await this.queues.requestSchedule(`node ${node.name} powered on`);
  }
}
