import { Inject, Injectable, Logger, OnApplicationBootstrap, BeforeApplicationShutdown } from '@nestjs/common';
import type { DriverEvent } from '@gantry/driver';
import { CLUSTER_DRIVER, type ClusterDriver } from '../../driver/driver.provider';
import { QueuesService } from '../../queues/queues.service';
import { HeartbeatsRepository } from '../node-manager/heartbeats.repository';
import { isFailoverExit } from './fault-classification';
import { incidentOfBurnIn } from './burn-in';

/** Missed heartbeats: a node is down after this many heartbeat intervals without one. */
const MISSED_BEATS = 3;
const MIN_GRACE_MS = 5000;
const FLUSH_EVERY_MS = 5000;

/**
 * Detection (worker): turns the driver's health events into `failover` queue work, watches
 * heartbeats (a node that misses them past the grace period is down), and records the last
 * heartbeat of each node in Postgres every few seconds (one statement for all nodes).
 */
@Injectable()
export class HealthMonitor implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('health');
  private unsubscribe?: () => void;
  private timer?: NodeJS.Timeout;
  private readonly lastBeat = new Map<string, number>();
  private readonly interval = new Map<string, number>();
  private readonly silent = new Set<string>();
  private beatsSinceFlush = new Set<string>();
  private lastFlush = 0;
  private lastWatch = 0;
  /**
   * No node can be late before this time (the earliest heartbeat deadline at the last scan, made
   * earlier by any beat that shortened a deadline): the watch runs every 250 ms but scans the
   * nodes (10,000 at 10,000 nodes) only from then on.
   */
  private nextDueAt = 0;
  /** The time of the newest heartbeat received: how far the event stream has come. */
  private newestBeat = 0;

  constructor(
    @Inject(CLUSTER_DRIVER) private readonly driver: ClusterDriver,
    private readonly queues: QueuesService,
    private readonly heartbeats: HeartbeatsRepository,
  ) {}

  onApplicationBootstrap(): void {
    this.unsubscribe = this.driver.onEvent((e) => this.onEvent(e));
    this.timer = setInterval(() => void this.watch(), 250);
    this.timer.unref?.();
    void this.expectBeats();
  }

  /**
   * Every node Postgres holds as up is watched from boot, beat or not: a node that went down
   * while no monitor listened (its down event lost with a killed worker) sends no heartbeat
   * to start its watch, and would otherwise stay `ready` with work placed on it for good.
   */
  private async expectBeats(): Promise<void> {
    const names = await this.heartbeats.expectedToBeat().catch((err: unknown) => {
      this.logger.warn(`nodes to watch: ${String(err)}`);
      return [];
    });
    const now = Date.now();
    for (const name of names) if (!this.lastBeat.has(name)) this.lastBeat.set(name, now);
    this.nextDueAt = 0;
  }

  beforeApplicationShutdown(): void {
    this.unsubscribe?.();
    if (this.timer) clearInterval(this.timer);
  }

  private onEvent(e: DriverEvent): void {
    const fail = (err: unknown) => this.logger.error(`cannot enqueue ${e.type}: ${String(err)}`);
    switch (e.type) {
      case 'heartbeat':
        for (const name of e.nodeNames) this.beat(name, e.at);
        this.newestBeat = Math.max(this.newestBeat, e.at);
        return;
      case 'xid':
        this.queues
          .failover(
            { action: 'fault', kind: 'xid', nodeName: e.nodeName, gpuIndex: e.gpuIndex, xid: e.xid, at: e.at, source: 'event' },
            `fault-xid-${e.nodeName}-${e.gpuIndex}-${e.xid}-${e.at}`,
          )
          .catch(fail);
        return;
      case 'node-down':
      case 'node-up':
      case 'nic-down':
      case 'nic-up':
        if (e.type === 'node-down') this.silent.add(e.nodeName);
        this.queues
          .failover({ action: 'fault', kind: e.type, nodeName: e.nodeName, at: e.at, source: 'event' }, `fault-${e.type}-${e.nodeName}-${e.at}`)
          .catch(fail);
        return;
      case 'job-exited': {
        // A burn-in ended: its incident takes the verdict now (its periodic check is the safety net).
        const burnInOf = incidentOfBurnIn(e.jobId);
        if (burnInOf) {
          this.queues.failover({ action: 'remediate', incidentId: burnInOf }, `burnin-exit-${e.jobId}`).catch(fail);
          return;
        }
        // Exits the cluster caused (node lost, GPU fault, eviction) belong to failover; the
        // fault's own event normally moves the job first, so this check comes a moment later.
        if (isFailoverExit(e.reason)) {
          this.queues.failover({ action: 'job-lost', jobId: e.jobId, exitReason: e.reason, at: e.at }, `lost-${e.jobId}-${e.at}`, { delayMs: 300 }).catch(fail);
        }
        return;
      }
      default:
        return;
    }
  }

  private beat(name: string, at: number): void {
    const prev = this.lastBeat.get(name);
    if (prev !== undefined && at > prev) this.interval.set(name, at - prev);
    this.lastBeat.set(name, at);
    this.nextDueAt = Math.min(this.nextDueAt, at + this.graceOf(name));
    this.beatsSinceFlush.add(name);
    if (this.silent.delete(name)) {
      this.queues
        .failover({ action: 'fault', kind: 'node-up', nodeName: name, at, source: 'heartbeat' }, `fault-node-up-${name}-hb-${at}`)
        .catch((err: unknown) => this.logger.error(String(err)));
    }
  }

  /**
   * Nodes silent for longer than MISSED_BEATS of their own heartbeat interval are down. Three
   * guards against blaming the cluster for our own trouble: after a stall of this process (the
   * watch ran late) every node gets a fresh grace period; a node is late only when the event
   * stream has brought other nodes' heartbeats from past its grace (a stream that lags behind
   * the clock, as under a heavy load, delays every node alike and proves no node silent); and
   * when most nodes fall silent at once the monitor reports it instead of failing the whole
   * cluster over.
   */
  private async watch(): Promise<void> {
    const now = Date.now();
    const gap = this.lastWatch > 0 ? now - this.lastWatch : 0;
    this.lastWatch = now;
    if (gap > 2000) {
      this.logger.warn(`health watch ran ${gap} ms late: fresh grace period for every node`);
      for (const name of this.lastBeat.keys()) this.lastBeat.set(name, now);
      this.nextDueAt = 0;
      return;
    }
    if (now >= this.nextDueAt) await this.findSilent(now);
    if (now - this.lastFlush >= FLUSH_EVERY_MS && this.beatsSinceFlush.size) {
      const names = [...this.beatsSinceFlush];
      this.beatsSinceFlush = new Set();
      this.lastFlush = now;
      await this.heartbeats.touchHeartbeats(names, new Date(now)).catch((err: unknown) => this.logger.warn(`heartbeat flush: ${String(err)}`));
    }
  }

  /** The grace period of a node: MISSED_BEATS of its own heartbeat interval, at least MIN_GRACE_MS. */
  private graceOf(name: string): number {
    return Math.max(MIN_GRACE_MS, MISSED_BEATS * (this.interval.get(name) ?? MIN_GRACE_MS));
  }

  /** One scan of every watched node: the late ones reported down, the next deadline kept. */
  private async findSilent(now: number): Promise<void> {
    const late: string[] = [];
    let next = Infinity;
    for (const [name, last] of this.lastBeat) {
      if (this.silent.has(name)) continue;
      const grace = this.graceOf(name);
      if (now - last > grace && this.newestBeat - last > grace) late.push(name);
      // (a node past its deadline whose lateness the lagging stream does not prove yet: due at once)
      else next = Math.min(next, last + grace);
    }
    this.nextDueAt = next;
    const watched = this.lastBeat.size - this.silent.size;
    if (late.length >= 4 && late.length > watched / 2) {
      this.logger.error(`${late.length} of ${watched} nodes stopped their heartbeats at once: the heartbeat path is suspect, no failover`);
      for (const name of late) this.lastBeat.set(name, now);
      this.nextDueAt = 0;
      return;
    }
    for (const name of late) {
      const last = this.lastBeat.get(name)!;
      const grace = this.graceOf(name);
      // a heartbeat that arrived while the nodes before it were reported: not silent after all
      if (now - last <= grace) continue;
      this.silent.add(name);
      this.logger.warn(`${name}: no heartbeat for ${now - last} ms (grace ${grace} ms): node down`);
      await this.queues
        .failover({ action: 'fault', kind: 'node-down', nodeName: name, at: now, source: 'heartbeat' }, `fault-node-down-${name}-hb-${now}`)
        .catch((err: unknown) => this.logger.error(String(err)));
    }
  }
}
