import { Injectable, Logger } from '@nestjs/common';
import { MigReconciler } from './mig-reconciler.service';
import { NodesRepository } from './nodes.repository';

/**
 * What happens when the cluster refuses to start work on the GPUs it was placed on (a MIG slice
 * the driver lacks, a GPU or node the database still thinks healthy): the cluster is
 * re-inventoried (MIG layouts reconciled: a missing slice leaves placement until its layout is
 * applied again), and GPUs whose refusal the inventory does not explain are held out of
 * placement with a doubling back-off. The caller requeues the work; the next cycle places it
 * elsewhere instead of on the same slot in a tight loop.
 */
@Injectable()
export class StartRefusals {
  private readonly logger = new Logger('start-refusals');

  constructor(
    private readonly mig: MigReconciler,
    private readonly nodes: NodesRepository,
  ) {}

  async refused(what: string, gpuIds: string[], why: string, now = new Date()): Promise<void> {
    const drift = await this.mig.reconcile(`the start of ${what} was refused`).catch((e: unknown) => {
      this.logger.warn(`re-inventory after a refused start failed: ${e instanceof Error ? e.message : String(e)}`);
      return [];
    });
    const explained = new Set(drift.map((d) => d.gpuId));
    const held = [...new Set(gpuIds)].filter((id) => !explained.has(id));
    if (held.length) await this.nodes.holdRefusedGpus(held, `the cluster refused to start ${what} on it (${why})`, now);
  }
}
