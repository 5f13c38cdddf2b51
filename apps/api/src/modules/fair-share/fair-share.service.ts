import { Inject, Injectable, Logger } from '@nestjs/common';
import type { TeamUsage } from '@gantry/scheduler';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import type { TenantScope } from '../../common/tenant-scope';
import { FairShareRepository } from './fair-share.repository';
import { bootstrapWindowMs, decayFactor, decayedAverageGpus, rollUsage, type DecayParams, type UsageRecord } from './usage-decay';

/** The scheduling cycle rolls the stored usage forward at most this often (wall-clock). */
const ROLL_EVERY_MS = 2000;

export interface TeamFairShare {
  id: string;
  tenantId: string;
  name: string;
  weight: number;
  quotas: { gpuModel: string; guaranteed: number; limit: number }[];
  /** What the team holds now. */
  held: TeamUsage;
  /** Decayed past usage in GPU-hours (cluster time). */
  decayedGpuHours: number;
  /** The same as an average number of GPUs (a team that held G GPUs for ever: G). */
  decayedAverageGpus: number;
}

/**
 * Fair share over time: the decayed usage of each team (usage-decay.ts), persisted by the cycle
 * and read back by the queue order and the fairness view; fair-usage.ts blends it with what the
 * team holds now for the engine.
 */
@Injectable()
export class FairShareService {
  private readonly logger = new Logger('fair-share');
  private last?: { atMs: number; records: Map<string, UsageRecord> };
  /** The roll in flight, if any (one at a time). */
  private rolling?: Promise<void>;

  constructor(
    private readonly repo: FairShareRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  get params(): DecayParams & { historyWeight: number } {
    return { ...this.config.fairShare, simSpeed: this.config.driver.simSpeed };
  }

  /**
   * The worker's cycle: each team's decayed average GPUs, from the stored usage rolled forward at
   * most every 2 s (exact over any gap). Only the first call waits for the roll: later ones decay
   * the last roll's records to now and roll in the background (the roll is a transaction of
   * several statements, and the cycle that answers a cold start should not wait for it).
   */
  async cycleHistoryGpus(nowMs = Date.now()): Promise<Record<string, number>> {
    const p = this.params;
    if (p.historyWeight === 0) return {};
    if (!this.last || nowMs - this.last.atMs >= ROLL_EVERY_MS || nowMs < this.last.atMs) {
      const rolling = (this.rolling ??= this.roll(nowMs).finally(() => (this.rolling = undefined)));
      if (!this.last) await rolling;
      else rolling.catch((e: unknown) => this.logger.warn(`fair-share usage not rolled forward (the next cycle tries again): ${String(e)}`));
    }
    const last = this.last!;
    const out: Record<string, number> = {};
    for (const [team, r] of last.records) out[team] = decayedAverageGpus(r.gpuSeconds * decayFactor(r.asOfMs, nowMs, p), p);
    return out;
  }

  private async roll(nowMs: number): Promise<void> {
    const p = this.params;
    const records = await this.repo.roll(nowMs, nowMs - bootstrapWindowMs(p), (records, holdings, teamIds) =>
      rollUsage(records, holdings, teamIds, nowMs, nowMs - bootstrapWindowMs(p), p),
    );
    this.last = { atMs: nowMs, records };
  }

  /** A caller's view: its tenant's teams with their decayed usage now (read, never written). */
  async teams(scope: TenantScope, nowMs = Date.now()): Promise<{ teams: TeamFairShare[]; capacity: TeamUsage }> {
    const p = this.params;
    const since = nowMs - bootstrapWindowMs(p);
    const { teams, holdings, capacity } = await this.repo.teams(scope, nowMs, since);
    const records = new Map(teams.filter((t) => t.record).map((t) => [t.id, t.record!]));
    const now = rollUsage(
      records,
      holdings,
      teams.map((t) => t.id),
      nowMs,
      since,
      p,
    );
    const out = teams.map((t) => {
      const gpuSeconds = now.get(t.id)?.gpuSeconds ?? 0;
      return {
        id: t.id,
        tenantId: t.tenantId,
        name: t.name,
        weight: t.weight,
        quotas: t.quotas,
        held: t.held,
        decayedGpuHours: gpuSeconds / 3600,
        decayedAverageGpus: decayedAverageGpus(gpuSeconds, p),
      };
    });
    return { teams: out, capacity };
  }

  /** Each team's decayed average GPUs, for a caller's queue order. */
  async historyGpus(scope: TenantScope): Promise<Record<string, number>> {
    if (this.params.historyWeight === 0) return {};
    return Object.fromEntries((await this.teams(scope)).teams.map((t) => [t.id, t.decayedAverageGpus]));
  }
}
