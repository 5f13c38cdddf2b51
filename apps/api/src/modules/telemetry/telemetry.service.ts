import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { CLUSTER_DRIVER, type ClusterDriver } from '../../driver/driver.provider';
import { ClusterSnapshotStore } from '../cluster/cluster-snapshot.store';
import { perRow } from '../cluster/per-row';
import { bucketOf, computeTick, withClusterRows, type TickGpu } from './telemetry-tick';
import { TelemetryRepository, type WrittenTick } from './telemetry.repository';

export interface TickReport {
  at: string;
  written: boolean;
  samples: number;
  rollupRows: number;
  pruned: number;
}

/**
 * Samples the driver's per-GPU metrics into Postgres (worker, `telemetry` queue): raw samples,
 * each GPU's latest state with idle tracking, and 1-minute and 1-hour usage rollups.
 */
@Injectable()
export class TelemetryService {
  private readonly logger = new Logger('telemetry');
  /** The last tick this process wrote (the next one sends only what changed since, while no other writer came between). */
  private written?: WrittenTick;

  constructor(
    @Inject(CLUSTER_DRIVER) private readonly driver: ClusterDriver,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repo: TelemetryRepository,
    private readonly snapshots: ClusterSnapshotStore,
  ) {}

  /** One tick at the interval boundary at or before `now` (a retry in the same interval is a no-op). */
  async tick(now = new Date()): Promise<TickReport> {
    const t = this.config.telemetry;
    const at = bucketOf(now, t.intervalSeconds);
    const windowStart = new Date(at.getTime() - t.intervalSeconds * 1000);
    const [samples, gpus, allocations, previousIdleSince] = await Promise.all([
      this.driver.metrics(),
      // the inventory from the worker's kept cluster snapshot (80,000 GPUs at 10,000 nodes, not read again each tick)
      this.snapshots.read().then((r) => r.nodes.flatMap(tickGpusOf)),
      this.repo.allocationsOverlapping(windowStart, at),
      this.repo.previousIdleSince(),
    ]);
    const out = computeTick({ at, windowSeconds: t.intervalSeconds, gpus, samples, allocations, previousIdleSince, idleSmPct: t.idleSmPct });
    const inWindow = new Date(at.getTime() - 1);
    const written = await this.repo.writeTick({
      at,
      latest: out.latest,
      deltas: withClusterRows(out.deltas),
      buckets: [
        { stepSeconds: 60, bucket: bucketOf(inWindow, 60) },
        { stepSeconds: 3600, bucket: bucketOf(inWindow, 3600) },
        { stepSeconds: 86400, bucket: bucketOf(inWindow, 86400) },
      ],
      since: this.written,
    });
    if (written) this.written = { at, latest: new Map(out.latest.map((l) => [l.gpuId, l])) };
    const hour = 3600_000;
    const pruned = await this.repo.prune({
      raw: new Date(at.getTime() - t.rawRetentionMinutes * 60_000),
      minute: new Date(at.getTime() - t.minuteRetentionHours * hour),
      hour: new Date(at.getTime() - t.hourRetentionDays * 24 * hour),
    });
    if (!written) this.logger.debug(`tick ${at.toISOString()} was already written`);
    return { at: at.toISOString(), written, samples: samples.length, rollupRows: out.deltas.length, pruned };
  }
}

/** A node's GPUs as a tick names them (kept per snapshot row: unchanged nodes cost a lookup). */
const tickGpusOf = perRow((n): TickGpu[] => n.gpus.map((g) => ({ id: g.id, nodeId: n.id, nodeName: n.name, index: g.index, model: g.model })));
