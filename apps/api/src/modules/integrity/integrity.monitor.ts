import { Inject, Injectable, Logger, OnApplicationBootstrap, BeforeApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { IntegrityService } from './integrity.service';
import { IntegrityStore } from './integrity.store';
import { CycleActivity } from '../../common/cycle-activity.store';

/** While this worker runs scheduling cycles, a due check looks again this often... */
export const STEP_ASIDE_MS = 1_000;
/** ...for at most this share of the interval, then runs anyway (checks are never skipped for long). */
const STEP_ASIDE_SHARE = 0.5;

/**
 * Worker: runs the strict invariants every GANTRY_INTEGRITY_CHECK_SECONDS (one worker at a time,
 * preferably one not running scheduling cycles),
 * logs each violation when it first appears, and leaves the counts for /metrics
 * (`gantry_invariant_violations{rule}`), so that a broken invariant pages someone.
 */
@Injectable()
export class IntegrityMonitor implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('integrity');
  private timer?: NodeJS.Timeout;
  private running = false;
  private seen = new Set<string>();
  private stopped = false;

  constructor(
    private readonly integrity: IntegrityService,
    private readonly store: IntegrityStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly activity: CycleActivity,
  ) {}

  onApplicationBootstrap(): void {
    const seconds = this.config.integrityCheckSeconds;
    if (seconds <= 0) return;
    this.timer = setInterval(() => void this.tick(), seconds * 1000);
    this.timer.unref?.();
  }

  beforeApplicationShutdown(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
  }

  async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      // A check reads and compares every allocation and GPU: at 10,000 nodes it holds this event
      // loop for about two seconds, which a scheduling cycle here would wait out between its round
      // trips. While this worker cycles, the check waits (the other worker's turn may come first).
      const until = Date.now() + this.config.integrityCheckSeconds * 1000 * STEP_ASIDE_SHARE;
      while (this.activity.cycling && Date.now() < until && !this.stopped) await new Promise((r) => setTimeout(r, STEP_ASIDE_MS).unref?.());
      if (this.stopped) return;
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
