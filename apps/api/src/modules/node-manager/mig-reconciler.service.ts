import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Inventory } from '@gantry/driver';
import { migProfile } from '@gantry/scheduler';
import { CLUSTER_DRIVER, type ClusterDriver } from '../../driver/driver.provider';
import { QueuesService } from '../../queues/queues.service';
import { MigChangesRepository } from './mig-changes.repository';
import { findMigDrift, type MigDrift, type MigSlot } from './mig-drift';

/**
 * Brings the database's MIG layouts in line with the cluster's (mig-drift.ts decides): at worker
 * boot, and whenever the cluster refuses to start work (a slice the database has and the driver
 * lacks). The database's slice rows become what the driver has, so the engine never places on
 * a slice that does not exist; a wanted layout is re-applied through the MIG manager. Calls
 * arriving while one runs are folded into one more run.
 */
@Injectable()
export class MigReconciler {
  private readonly logger = new Logger('mig');
  private running?: Promise<MigDrift[]>;
  private again?: Promise<MigDrift[]>;

  constructor(
    private readonly migChanges: MigChangesRepository,
    private readonly queues: QueuesService,
    @Inject(CLUSTER_DRIVER) private readonly driver: ClusterDriver,
  ) {}

  /** `inventory`: one the caller discovered after its own last database write (boot); read fresh otherwise. */
  reconcile(reason: string, inventory?: Inventory): Promise<MigDrift[]> {
    if (!this.running) {
      this.running = this.run(reason, inventory).finally(() => (this.running = undefined));
      return this.running;
    }
    this.again ??= this.running
      .catch(() => [])
      .then(() => {
        this.again = undefined;
        return this.reconcile(reason);
      });
    return this.again;
  }

  private async run(reason: string, inventory?: Inventory): Promise<MigDrift[]> {
    // Database first, then the driver: a change committed in between is already on the cluster.
    const rows = await this.migChanges.gpuLayouts();
    const inv = inventory ?? (await this.driver.discover());
    const drift = findMigDrift(
      rows.map((g) => ({
        gpuId: g.id,
        nodeName: g.node.name,
        index: g.index,
        model: g.model,
        migCapable: g.migCapable,
        vmNode: g.node.persona === 'vm_passthrough',
        mode: g.mode,
        layout: g.instances,
        changing: g.migTarget !== null,
      })),
      inv.nodes.flatMap((n) => n.gpus.map((g) => ({ nodeName: n.name, index: g.index, layout: g.migLayout }))),
    );
    const byId = new Map(rows.map((g) => [g.id, g]));
    const done: MigDrift[] = [];
    for (const d of drift) {
      const g = byId.get(d.gpuId)!;
      const existing = d.existing.map((e) => ({ ...e, size: sizeOf(g.model, e) }));
      const wanted = d.action === 'reapply' ? d.wanted : null;
      if (!(await this.migChanges.adoptClusterLayout({ gpuId: d.gpuId, version: g.version, existing, wanted, why: d.why }, new Date()))) continue;
      done.push(d);
      this.logger.warn(`GPU ${d.index} of ${d.nodeName} (${reason}): ${d.why}`);
      if (wanted) await this.queues.mig({ gpuId: d.gpuId, layout: wanted, reason: `re-applying the wanted layout (${reason})` });
    }
    if (done.length) await this.queues.requestSchedule(`MIG layouts reconciled with the cluster (${reason})`);
    return done;
  }
}

function sizeOf(model: string, s: MigSlot): number {
  return migProfile(model, s.profile)?.size ?? 1;
}
