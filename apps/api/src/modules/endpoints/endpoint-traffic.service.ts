import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { RedisService } from '../../common/redis.service';
import type { TrafficSample } from './autoscaler';

/** Simulated service time of one request: in-flight requests = rps x this (Little's law). */
export const SIM_REQUEST_SECONDS = 0.5;
const KEEP_SECONDS = 180;

export interface SimTrafficSpec {
  rps: number;
  fromMs: number;
  untilMs: number;
}

export interface AutoscalerState {
  panicSinceMs: number | null;
  panic: boolean;
  observedConcurrency: number;
  observedRps: number;
  recommended: number;
  reason: string;
}

/**
 * Endpoint traffic in Redis, so that every api process feeds the one autoscaler: a hash of
 * requests per second per endpoint, the simulated traffic in force, the activator's cold-start
 * marker and the autoscaler's last state (shown by GET /v1/endpoints/:id).
 */
@Injectable()
export class EndpointTraffic {
  constructor(
    private readonly redis: RedisService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private key(endpointId: string, what: string) {
    return `${this.config.queuePrefix}:ep:${endpointId}:${what}`;
  }

  async recordRequest(endpointId: string, nowMs = Date.now()): Promise<void> {
    const k = this.key(endpointId, 'req');
    await this.redis.client
      .multi()
      .hincrby(k, String(Math.floor(nowMs / 1000)), 1)
      .expire(k, KEEP_SECONDS)
      .exec();
  }

  async setSimTraffic(endpointId: string, spec: SimTrafficSpec): Promise<void> {
    await this.redis.client.set(this.key(endpointId, 'sim'), JSON.stringify(spec), 'PX', Math.max(1, spec.untilMs - Date.now()) + KEEP_SECONDS * 1000);
  }

  /** Per-second samples of the last `seconds` seconds (oldest first), real and simulated requests. */
  async samples(endpointId: string, nowMs = Date.now(), seconds = 60): Promise<TrafficSample[]> {
    const [req, sim] = await Promise.all([this.redis.client.hgetall(this.key(endpointId, 'req')), this.redis.client.get(this.key(endpointId, 'sim'))]);
    const spec = sim ? (JSON.parse(sim) as SimTrafficSpec) : null;
    const nowSec = Math.floor(nowMs / 1000);
    const out: TrafficSample[] = [];
    for (let t = nowSec - seconds + 1; t <= nowSec; t++) {
      let rps = Number(req[String(t)] ?? 0);
      if (spec && t * 1000 >= Math.floor(spec.fromMs / 1000) * 1000 && t * 1000 < spec.untilMs) rps += spec.rps;
      out.push({ t, rps, concurrency: rps * SIM_REQUEST_SECONDS });
    }
    return out;
  }

  /** Drops request buckets older than the retention (the hash's TTL covers idle endpoints). */
  async prune(endpointId: string, nowMs = Date.now()): Promise<void> {
    const k = this.key(endpointId, 'req');
    const fields = await this.redis.client.hkeys(k);
    const old = fields.filter((f) => Number(f) < Math.floor(nowMs / 1000) - KEEP_SECONDS);
    if (old.length) await this.redis.client.hdel(k, ...old);
  }

  /** The activator holds a request (counted until release; the TTL covers a crashed api process). */
  async hold(endpointId: string): Promise<void> {
    const k = this.key(endpointId, 'held');
    await this.redis.client.multi().incr(k).pexpire(k, 120_000).exec();
  }

  async release(endpointId: string): Promise<void> {
    await this.redis.client.decr(this.key(endpointId, 'held'));
  }

  async held(endpointId: string): Promise<number> {
    return Math.max(0, Number((await this.redis.client.get(this.key(endpointId, 'held'))) ?? 0));
  }

  /** The activator's marker of a cold start in progress: true for the request that set it. */
  async beginColdStart(endpointId: string, nowMs: number): Promise<boolean> {
    return (await this.redis.client.set(this.key(endpointId, 'cold'), String(nowMs), 'PX', 120_000, 'NX')) === 'OK';
  }

  async endColdStart(endpointId: string): Promise<void> {
    await this.redis.client.del(this.key(endpointId, 'cold'));
  }

  /** Why replicas wait (set by the scheduling cycle; short-lived, refreshed every cycle). */
  async setReasons(endpointId: string, reasons: { code: string; message: string }[]): Promise<void> {
    await this.redis.client.set(this.key(endpointId, 'reasons'), JSON.stringify(reasons), 'EX', 30);
  }

  async reasons(endpointId: string): Promise<{ code: string; message: string }[]> {
    const s = await this.redis.client.get(this.key(endpointId, 'reasons'));
    return s ? (JSON.parse(s) as { code: string; message: string }[]) : [];
  }

  async setState(endpointId: string, state: AutoscalerState): Promise<void> {
    await this.redis.client.set(this.key(endpointId, 'as'), JSON.stringify(state), 'EX', KEEP_SECONDS);
  }

  async state(endpointId: string): Promise<AutoscalerState | null> {
    const s = await this.redis.client.get(this.key(endpointId, 'as'));
    return s ? (JSON.parse(s) as AutoscalerState) : null;
  }
}
