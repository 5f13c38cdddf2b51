import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import type { NodeRow } from '../cluster/cluster.repository';
import { QueuesService } from '../../queues/queues.service';
import { ReservationsRepository } from './reservations.repository';
import { chooseHolds, type HeldWindow, type Hold, type HoldNode } from './reservation-holds';
import { windowsOf } from './reservation-windows';
import { heldGpusOf } from './reservations.service';

/**
 * The scheduling cycle's view of reservations: the windows open now or starting within the
 * look-ahead (each reservation's next one), and the GPUs each holds on the cluster as it is.
 */
@Injectable()
export class ReservationHoldsService {
  constructor(
    private readonly repo: ReservationsRepository,
    private readonly queues: QueuesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The worker's tick: when a window opened or closed since the last tick (or one enters the
   * look-ahead), asks for a scheduling cycle, which evicts from an opening window's GPUs, places
   * the holder, or lets others back on a closed window's GPUs. Returns the boundaries it saw.
   */
  async tick(now = Date.now()): Promise<{ boundaries: number }> {
    const since = now - this.config.reservations.tickSeconds * 1000 * 1.5;
    const ahead = this.config.reservations.lookaheadSeconds * 1000;
    const rows = await this.repo.spanning(new Date(since - 7 * 86_400_000), new Date(now + ahead + 1));
    let boundaries = 0;
    for (const r of rows) {
      const times = { startsAt: r.startsAt.getTime(), endsAt: r.endsAt.getTime(), cron: r.cron, timeZone: r.timeZone, durationMinutes: r.durationMinutes };
      for (const w of windowsOf(times, since - ahead, now + ahead + 1, 50)) {
        if ([w.start, w.end, w.start - ahead].some((t) => t > since && t <= now)) boundaries++;
      }
    }
    if (boundaries) await this.queues.requestSchedule('reservation window opened or closed');
    return { boundaries };
  }

  /** The windows open at `now` or starting within the look-ahead, one per reservation (its next). */
  async windows(now: number, gpusPerNode: (model: string) => number): Promise<HeldWindow[]> {
    const until = now + this.config.reservations.lookaheadSeconds * 1000;
    const rows = await this.repo.spanning(new Date(now - 7 * 86_400_000), new Date(until + 1));
    const out: HeldWindow[] = [];
    for (const r of rows) {
      const w = windowsOf(
        { startsAt: r.startsAt.getTime(), endsAt: r.endsAt.getTime(), cron: r.cron, timeZone: r.timeZone, durationMinutes: r.durationMinutes },
        now,
        until + 1,
        1,
      )[0];
      if (!w) continue;
      out.push({
        reservationId: r.id,
        name: r.name,
        teamId: r.teamId,
        gpuModel: r.gpuModel,
        heldGpus: heldGpusOf(r, gpusPerNode(r.gpuModel)),
        wholeNodes: r.nodes !== null,
        start: w.start,
        end: w.end,
      });
    }
    return out;
  }

  /** The holds on the cluster `nodes` (the cycle's rows) at `now`; empty without reservations. */
  async holds(nodes: NodeRow[], now = Date.now()): Promise<Hold[]> {
    // GPUs per node by model: counted only when a window needs it (every GPU of the cluster is walked)
    let perNode: Map<string, number> | undefined;
    const gpusPerNode = (model: string) => {
      if (!perNode) {
        perNode = new Map();
        for (const n of nodes) {
          const count = new Map<string, number>();
          for (const g of n.gpus) count.set(g.model, (count.get(g.model) ?? 0) + 1);
          for (const [m, c] of count) perNode.set(m, Math.max(perNode.get(m) ?? 0, c));
        }
      }
      return perNode.get(model) ?? 0;
    };
    const windows = await this.windows(now, gpusPerNode);
    if (!windows.length) return [];
    const models = new Set(windows.map((w) => w.gpuModel));
    const jobIds = new Set<string>();
    for (const n of nodes) for (const g of n.gpus) if (models.has(g.model)) for (const a of g.allocations) if (a.jobId) jobIds.add(a.jobId);
    const owners = new Map((await this.repo.jobOwners([...jobIds])).map((j) => [j.id, j]));
    const holdNodes: HoldNode[] = nodes.map((n) => ({
      id: n.id,
      name: n.name,
      gpus: n.gpus.map((g) => ({
        id: g.id,
        model: g.model,
        usable: g.health === 'healthy' && n.state === 'ready',
        users: g.allocations.map((a) => {
          const o = a.jobId ? owners.get(a.jobId) : undefined;
          return { jobId: a.jobId, teamId: o?.teamId ?? null, preemptible: !!o && o.preemptible && o.priority !== 'critical' };
        }),
      })),
    }));
    return chooseHolds(holdNodes, windows, now);
  }
}
