import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { CLUSTER_DRIVER, type ClusterDriver } from '../driver/driver.provider';
import { ClusterRepository } from '../modules/cluster/cluster.repository';
import { ClusterSnapshotStore } from '../modules/cluster/cluster-snapshot.store';
import { deriveAhead } from '../modules/cluster/snapshot';
import { ForeignGpuUse } from '../modules/cluster/foreign-gpu-use.store';
import { LifecycleService } from '../modules/lifecycle/lifecycle.service';
import { ExitBatcher } from '../modules/lifecycle/exit-batcher.service';
import { isFailoverExit } from '../modules/failover/fault-classification';
import { incidentOfBurnIn } from '../modules/failover/burn-in';
import { MigReconciler } from '../modules/node-manager/mig-reconciler.service';

/**
 * Worker boot and safety net: loads the driver's inventory, bridges driver events into the
 * lifecycle queue, and re-derives queue work from Postgres periodically, so that a lost
 * Redis message (or a lost Redis) delays work but never loses it.
 */
@Injectable()
export class Reconciler implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('reconciler.service');
  private timer?: NodeJS.Timeout;
  private unsubscribe?: () => void;
  private running = false;

  constructor(
    @Inject(CLUSTER_DRIVER) private readonly driver: ClusterDriver,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly cluster: ClusterRepository,
    private readonly lifecycle: LifecycleService,
    private readonly mig: MigReconciler,
    private readonly foreign: ForeignGpuUse,
    private readonly exits: ExitBatcher,
    private readonly snapshots: ClusterSnapshotStore,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const inv = await this.driver.discover();
    const added = await this.cluster.syncInventory(inv);
    this.foreign.set(new Map(inv.nodes.filter((n) => n.externalGpuUse).map((n) => [n.name, n.externalGpuUse!])));
    this.logger.log(`${this.driver.name} cluster: ${inv.nodes.length} nodes (${added.nodesAdded} new, ${added.gpusAdded} new GPUs)`);
    // Before any work is started or re-attached: the database's MIG slices become the cluster's
    // (a restarted simulated cluster has none of them), wanted layouts are applied again.
    await this.mig.reconcile('worker boot').catch((e: unknown) => this.logger.warn(`MIG reconcile at boot: ${e instanceof Error ? e.message : String(e)}`));
    this.unsubscribe = this.driver.onEvent((e) => {
      // Exits the cluster caused (node lost, GPU fault, eviction) go to failover (HealthMonitor).
      // (a burn-in is no tenant's job: its incident takes its exit)
      // (recorded in batches: exit-batcher.service.ts)
      if (e.type === 'job-exited' && !isFailoverExit(e.reason) && !incidentOfBurnIn(e.jobId)) this.exits.exited(e.jobId, e.exitCode);
    });
    await this.tick(true);
    // the first cycle finds every node's engine state derived (in the background: boot does not wait)
    void this.snapshots
      .read()
      .then((r) => deriveAhead(r.nodes))
      .catch((e: unknown) => this.logger.debug(`deriving node states ahead: ${String(e)}`));
    this.timer = setInterval(() => void this.tick(), this.config.reconcileSeconds * 1000);
  }

  /** `boot`: the worker's first round, which sends every start again (messages may be lost with it). */
  private async tick(boot = false): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      // GPUs held by pods Gantry did not create: used capacity for the next cycles
      if (this.driver.gpuUseByOthers) this.foreign.set(await this.driver.gpuUseByOthers());
      await this.lifecycle.reconcile(new Date(), { everyStart: boot });
    } catch (e) {
      this.logger.warn(`reconcile failed: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      this.running = false;
    }
  }

  /** Stops the safety net before the connections it uses close. */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.unsubscribe?.();
    await this.exits.drain();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.driver.close();
  }
}
