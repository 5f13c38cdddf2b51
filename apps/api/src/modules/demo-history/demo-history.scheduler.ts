import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { DemoHistoryRepository } from './demo-history.repository';
import { DemoHistoryService } from './demo-history.service';

/** How long it waits for the worker's boot to load the inventory. */
const INVENTORY_WAIT_MS = 120_000;

/**
 * Worker: with GANTRY_DEMO_HISTORY=true on a simulated cluster, writes the demo's past once, in
 * the background after boot (the API and console answer meanwhile); progress goes to the log.
 */
@Injectable()
export class DemoHistoryScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('demo-history');
  private stopping = false;
  private running?: Promise<void>;

  constructor(
    private readonly history: DemoHistoryService,
    private readonly repo: DemoHistoryRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.demoHistory.enabled) return;
    if (!this.config.driver.simulated) {
      this.logger.log('GANTRY_DEMO_HISTORY is set but the cluster is not simulated: no synthetic past is written');
      return;
    }
    this.running = this.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.running;
  }

  private async start(): Promise<void> {
    try {
      const deadline = Date.now() + INVENTORY_WAIT_MS;
      while ((await this.repo.inventory()).length === 0) {
        if (this.stopping || Date.now() > deadline) return;
        await new Promise((r) => setTimeout(r, 1000).unref());
      }
      if (this.stopping) return;
      const r = await this.history.run();
      if (r.written)
        this.logger.log(
          `wrote ${r.jobs} jobs (${r.runs} runs, ${r.allocations} allocations, ${r.faults} GPU faults) and ${r.rollupRows} rollup rows for ${r.from} .. ${r.to} in ${(r.ms / 1000).toFixed(1)} s (writing ${(r.writeMs / 1000).toFixed(1)} s)`,
        );
      else this.logger.log(`nothing written: ${r.reason}`);
    } catch (e) {
      this.logger.error(`demo history failed (nothing written): ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
