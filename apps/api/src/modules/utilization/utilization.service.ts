import { Inject, Injectable } from '@nestjs/common';
import {
  MAX_UTILIZATION_POINTS,
  MAX_UTILIZATION_RANGE_DAYS,
  type GpuHeatmap,
  type IdleAllocations,
  type UtilizationGroupBy,
  type UtilizationPoint,
  type UtilizationReport,
  type UtilizationTotals,
} from '@gantry/contracts';
import { APP_CONFIG, type AppConfig, type TelemetryConfig } from '../../config/config';
import { toCsv, type CsvValue } from '../../common/csv';
import { DomainError } from '../../common/errors';
import { scopeOf, type Principal } from '../../common/principal';
import { UtilizationRepository } from './utilization.repository';

const DAY_MS = 86_400_000;
/** Default bucket widths, smallest first: the first that gives at most DEFAULT_POINTS points. */
const DEFAULT_STEPS = [60, 300, 900, 3600, 6 * 3600, 86400];
const DEFAULT_POINTS = 200;

export interface ReportRequest {
  groupBy: UtilizationGroupBy;
  from?: string;
  to?: string;
  step?: number;
}

/** The window and the rollup a report reads, validated (400 naming the rule otherwise). */
export function resolveWindow(q: Omit<ReportRequest, 'groupBy'>, now: Date): { from: Date; to: Date; stepSeconds: number; rollupSeconds: 60 | 3600 | 86400 } {
  const to = q.to ? new Date(q.to) : now;
  const from = q.from ? new Date(q.from) : new Date(to.getTime() - DAY_MS);
  if (from.getTime() >= to.getTime()) {
    throw new DomainError('validation_failed', '`from` must be before `to`', [
      { field: 'from', problem: `${from.toISOString()} is not before ${to.toISOString()}` },
    ]);
  }
  const rangeSeconds = (to.getTime() - from.getTime()) / 1000;
  if (rangeSeconds > MAX_UTILIZATION_RANGE_DAYS * 86400) {
    throw new DomainError('validation_failed', `from: the range is at most ${MAX_UTILIZATION_RANGE_DAYS} days (MAX_UTILIZATION_RANGE_DAYS)`, [
      { field: 'from', problem: `${Math.ceil(rangeSeconds / 86400)} days before \`to\`: at most ${MAX_UTILIZATION_RANGE_DAYS}` },
    ]);
  }
  const step = q.step ?? DEFAULT_STEPS.find((s) => rangeSeconds / s <= DEFAULT_POINTS) ?? 86400;
  if (step < 60 || step % 60 !== 0) {
    throw new DomainError('validation_failed', 'step must be a whole number of minutes (at least 60 s)', [
      { field: 'step', problem: `${step} s is not a multiple of 60 s` },
    ]);
  }
  const points = Math.ceil(rangeSeconds / step);
  if (points > MAX_UTILIZATION_POINTS) {
    throw new DomainError(
      'validation_failed',
      `step ${step} s over ${rangeSeconds} s gives ${points} points: the limit is ${MAX_UTILIZATION_POINTS} points per series (MAX_UTILIZATION_POINTS); use a larger step or a shorter range`,
      [{ field: 'step', problem: `at most ${MAX_UTILIZATION_POINTS} points per series` }],
    );
  }
  // Buckets align on the step so that the rollups fall entirely into one bucket.
  const alignedFrom = new Date(Math.floor(from.getTime() / (step * 1000)) * step * 1000);
  return { from: alignedFrom, to, stepSeconds: step, rollupSeconds: step % 86400 === 0 ? 86400 : step % 3600 === 0 ? 3600 : 60 };
}

type Sums = { c: number; a: number; b: number; m: number; e: number; cost: number; est: number; idle: number };
/** Per answer bucket of one series: the sums of Sums, column-wise. */
type Acc = Record<keyof Sums, Float64Array>;
const newAcc = (n: number): Acc => ({
  c: new Float64Array(n),
  a: new Float64Array(n),
  b: new Float64Array(n),
  m: new Float64Array(n),
  e: new Float64Array(n),
  cost: new Float64Array(n),
  est: new Float64Array(n),
  idle: new Float64Array(n),
});
const zero = (): Sums => ({ c: 0, a: 0, b: 0, m: 0, e: 0, cost: 0, est: 0, idle: 0 });
const r4 = (n: number) => Math.round(n * 10_000) / 10_000;

/**
 * Utilization and chargeback: rollups aggregated by team, tenant, GPU model or node, with
 * measured and estimated energy and the cost of the allocated GPU-hours.
 */
@Injectable()
export class UtilizationService {
  constructor(
    private readonly repo: UtilizationRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private price(model: string): TelemetryConfig['prices'][string] {
    const p = this.config.telemetry.prices;
    return p[model] ?? p['*'] ?? { pricePerGpuHour: 0, idleW: 0, busyW: 0 };
  }

  async report(p: Principal, q: ReportRequest, now = new Date()): Promise<UtilizationReport> {
    const scope = scopeOf(p);
    const w = resolveWindow(q, now);
    const rows = await this.repo.usage(scope, { groupBy: q.groupBy, ...w });
    const seesCapacity = scope.kind === 'platform' && (q.groupBy === 'node' || q.groupBy === 'gpuModel');
    const nPoints = Math.ceil((w.to.getTime() - w.from.getTime()) / (w.stepSeconds * 1000));

    const series = new Map<string, Acc>();
    const models = new Set<string>();
    for (const r of rows) {
      models.add(r.gpuModel);
      let acc = series.get(r.key);
      if (!acc) series.set(r.key, (acc = newAcc(nPoints)));
      const price = this.price(r.gpuModel);
      for (let i = 0; i < r.k.length; i++) {
        const k = r.k[i]!;
        if (k < 0 || k >= nPoints) continue;
        const base = seesCapacity ? r.c[i]! : r.a[i]!;
        const busy = Math.min(r.b[i]!, base || r.b[i]!);
        acc.c[k]! += r.c[i]!;
        acc.a[k]! += r.a[i]!;
        acc.b[k]! += r.b[i]!;
        acc.m[k]! += r.m[i]!;
        acc.e[k]! += r.e[i]!;
        acc.idle[k]! += r.i[i]!;
        acc.cost[k]! += (r.a[i]! / 3600) * price.pricePerGpuHour;
        // Watt-seconds: busy GPU-seconds at busy watts, the rest of the base at idle watts.
        acc.est[k]! += busy * price.busyW + Math.max(0, base - busy) * price.idleW;
      }
    }
    const teamsNow = q.groupBy === 'team' ? await this.repo.teamsNow(scope) : undefined;
    // kWh power management saved (nodes off rather than on and idle): the cluster's, platform only
    const savedWs = scope.kind === 'platform' ? await this.repo.savedWattSeconds(w.from, w.to) : null;
    // Teams that hold GPUs now or have a quota appear even before their first rollup.
    for (const key of teamsNow?.keys() ?? []) if (!series.has(key)) series.set(key, newAcc(nPoints));
    const labels = await this.repo.labels(scope, q.groupBy, [...series.keys()]);
    const times = Array.from({ length: nPoints }, (_, k) => new Date(w.from.getTime() + k * w.stepSeconds * 1000).toISOString());
    const all = zero();
    const out = [...series].map(([key, acc]) => {
      const tot = zero();
      const points: UtilizationPoint[] = new Array(nPoints);
      // Up to 100 series x 720 points: one object per point, no intermediate Sums/totals.
      for (let k = 0; k < nPoints; k++) {
        const c = acc.c[k]!,
          a = acc.a[k]!,
          b = acc.b[k]!,
          m = acc.m[k]!,
          e = acc.e[k]!,
          cost = acc.cost[k]!,
          idle = acc.idle[k]!;
        tot.c += c;
        tot.a += a;
        tot.b += b;
        tot.m += m;
        tot.e += e;
        tot.cost += cost;
        tot.est += acc.est[k]!;
        tot.idle += idle;
        points[k] = point({ c, a, b, m, e, cost, idle, est: 0 }, times[k]!, w.stepSeconds, seesCapacity);
      }
      add(all, tot);
      return {
        key,
        label: labels.get(key) ?? key,
        ...(teamsNow ? { now: teamsNow.get(key) ?? { allocatedGpus: 0, quotaGuaranteed: null, quotaLimit: null } } : {}),
        totals: this.totals(tot, seesCapacity),
        points,
      };
    });
    out.sort((a, b) => b.totals.allocatedGpuHours - a.totals.allocatedGpuHours || a.label.localeCompare(b.label));
    return {
      groupBy: q.groupBy,
      from: w.from.toISOString(),
      to: w.to.toISOString(),
      stepSeconds: w.stepSeconds,
      resolution: w.rollupSeconds === 60 ? '1m' : w.rollupSeconds === 3600 ? '1h' : '1d',
      currency: this.config.telemetry.currency,
      series: out,
      totals: this.totals(all, seesCapacity),
      prices: [...models].sort().map((gpuModel) => ({ gpuModel, ...this.price(gpuModel) })),
      energySavedKWh: savedWs === null ? null : r4(savedWs / 3.6e6),
    };
  }

  /** The report as CSV: one line per group and bucket (chargeback export). */
  async reportCsv(p: Principal, q: ReportRequest, now = new Date()): Promise<string> {
    const r = await this.report(p, q, now);
    const perNode = q.groupBy === 'node';
    const capacity = perNode
      ? await this.repo.nodeCapacity(r.series.map((s) => s.key))
      : new Map<string, { gpuCount: number; gpuModel: string; migLayout: string | null }>();
    const head = [
      q.groupBy,
      'label',
      ...(perNode ? ['gpu_count', 'gpu_model', 'mig_layout'] : []),
      'bucket_start',
      'capacity_gpu_hours',
      'allocated_gpu_hours',
      'busy_gpu_hours',
      'idle_gpu_hours',
      'allocation_ratio',
      'sm_ratio',
      'memory_used_mib',
      'energy_kwh',
      `cost_${r.currency.toLowerCase()}`,
    ];
    const rows: CsvValue[][] = [head];
    for (const s of r.series) {
      for (const pt of s.points) {
        // Labels are names people chose (teams, tenants, nodes): csvCell keeps them text, never a formula.
        const node = capacity.get(s.key);
        rows.push([
          s.key,
          s.label,
          ...(perNode ? [node?.gpuCount ?? null, node?.gpuModel ?? null, node?.migLayout ?? null] : []),
          pt.t,
          pt.capacityGpuHours,
          pt.allocatedGpuHours,
          pt.busyGpuHours,
          pt.idleGpuHours,
          pt.allocationRatio,
          pt.smRatio,
          pt.memoryUsedMiB,
          pt.energyKWh,
          pt.cost,
        ]);
      }
    }
    return toCsv(rows);
  }

  async idle(p: Principal, q: { minIdleSeconds?: number; limit: number }, now = new Date()): Promise<IdleAllocations> {
    const t = this.config.telemetry;
    const minIdleSeconds = q.minIdleSeconds ?? t.idleMinutes * 60;
    const rows = await this.repo.idleAllocations(scopeOf(p), new Date(now.getTime() - minIdleSeconds * 1000), q.limit);
    return {
      smThresholdPct: t.idleSmPct,
      minIdleSeconds,
      items: rows.map((r) => ({
        ...r,
        idleSince: r.idleSince.toISOString(),
        idleSeconds: Math.max(0, Math.round((now.getTime() - r.idleSince.getTime()) / 1000)),
      })),
    };
  }

  async heatmap(): Promise<GpuHeatmap> {
    const h = await this.repo.heatmap();
    const nodeIndex = new Map(h.nodes.map((n, i) => [n.id, i]));
    const latest = new Map(h.latest.map((l) => [l.gpuId, l]));
    const held = new Map(h.held.map((x) => [x.gpuId, x.units]));
    const models: string[] = [];
    const modelIndex = new Map<string, number>();
    const gpus = [...h.gpus].sort((a, b) => nodeIndex.get(a.nodeId)! - nodeIndex.get(b.nodeId)! || a.index - b.index);
    const out: GpuHeatmap['gpus'] = { id: [], node: [], index: [], model: [], smPct: [], memoryPct: [], powerW: [], allocated: [], health: [] };
    let at: Date | null = h.newestTick;
    for (const g of gpus) {
      if (!modelIndex.has(g.model)) {
        modelIndex.set(g.model, models.length);
        models.push(g.model);
      }
      const l = latest.get(g.id);
      if (l && (!at || l.at > at)) at = l.at;
      out.id.push(g.id);
      out.node.push(nodeIndex.get(g.nodeId)!);
      out.index.push(g.index);
      out.model.push(modelIndex.get(g.model)!);
      out.smPct.push(l ? l.smPct : null);
      out.memoryPct.push(l ? Math.round((l.memoryUsedMiB / g.memoryMiB) * 1000) / 10 : null);
      out.powerW.push(l ? l.powerW : null);
      out.allocated.push(Math.min(1, r4(held.get(g.id) ?? 0)));
      out.health.push(g.health === 'healthy' ? 0 : g.health === 'degraded' ? 1 : 2);
    }
    return { at: at?.toISOString() ?? null, nodes: h.nodes.map((n) => n.name), models, gpus: out };
  }

  private totals(s: Sums, seesCapacity: boolean): UtilizationTotals {
    const base = seesCapacity ? s.c : s.a;
    return {
      capacityGpuHours: seesCapacity ? r4(s.c / 3600) : null,
      allocatedGpuHours: r4(s.a / 3600),
      busyGpuHours: r4(s.b / 3600),
      allocationRatio: seesCapacity ? (s.c > 0 ? r4(s.a / s.c) : 0) : null,
      smRatio: base > 0 ? r4(Math.min(1, s.b / base)) : null,
      energyKWh: r4(s.e / 3.6e6),
      energyEstimateKWh: r4(s.est / 3.6e6),
      cost: Math.round(s.cost * 100) / 100,
      idleGpuHours: r4(s.idle / 3600),
    };
  }
}

/** One answer point from its sums; the same figures as `totals` gives for them. */
export function point({ c, a, b, m, e, cost, idle }: Sums, t: string, stepSeconds: number, seesCapacity: boolean): UtilizationPoint {
  const base = seesCapacity ? c : a;
  return {
    t,
    capacityGpuHours: seesCapacity ? r4(c / 3600) : null,
    allocatedGpuHours: r4(a / 3600),
    busyGpuHours: r4(b / 3600),
    allocationRatio: seesCapacity ? (c > 0 ? r4(a / c) : 0) : null,
    smRatio: base > 0 ? r4(Math.min(1, b / base)) : null,
    memoryUsedMiB: Math.round(m / stepSeconds),
    energyKWh: r4(e / 3.6e6),
    cost: Math.round(cost * 100) / 100,
    idleGpuHours: r4(idle / 3600),
  };
}

function add(into: Sums, s: Sums): void {
  into.c += s.c;
  into.a += s.a;
  into.b += s.b;
  into.m += s.m;
  into.e += s.e;
  into.cost += s.cost;
  into.est += s.est;
  into.idle += s.idle;
}
