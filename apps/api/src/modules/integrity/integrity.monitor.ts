import { Inject, Injectable, Logger, OnApplicationBootstrap, BeforeApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { IntegrityService } from './integrity.service';
import { IntegrityStore } from './integrity.store';

/**
 * Worker: runs the strict invariants every GANTRY_INTEGRITY_CHECK_SECONDS (one worker at a time),
 * logs each violation when it first appears, and leaves the counts for /metrics
 * (`gantry_invariant_violations{rule}`), so that a broken invariant pages someone.
 */
@Injectable()
export class IntegrityMonitor implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('integrity');
  private timer?: NodeJS.Timeout;
  private running = false;
  private seen = new Set<string>();

  constructor(
    private readonly integrity: IntegrityService,
    private readonly store: IntegrityStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    const seconds = this.config.integrityCheckSeconds;
    if (seconds <= 0) return;
    this.timer = setInterval(() => void this.tick(), seconds * 1000);
    this.timer.unref?.();
  }

  beforeApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      if (!(await this.store.claim(this.config.integrityCheckSeconds * 0.9))) return;
      const r = await this.integrity.check(false);
      const now = new Set(r.violations.map((v) => `${v.rule} ${v.subject}`));
      for (const v of r.violations) if (!this.seen.has(`${v.rule} ${v.subject}`)) this.logger.error(`invariant violated: ${v.rule} ${v.subject}: ${v.message}`);
      this.seen = now;
    } catch (e) {
      this.logger.warn(`integrity check failed: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      this.running = false;
    }
  }
}
