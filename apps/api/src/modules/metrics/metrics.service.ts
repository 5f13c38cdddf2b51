import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { ClusterService } from '../cluster/cluster.service';
import { MetricsRecorder, WORKER_COUNTERS, type RecordedMetrics } from './metrics.recorder';
import { MetricsRepository } from './metrics.repository';
import { IntegrityStore, type IntegritySummary } from '../integrity/integrity.store';
import { STRICT_RULES } from '../../invariants';

const COUNTER_HELP: Record<(typeof WORKER_COUNTERS)[number], string> = {
  placements: 'Jobs placed by the scheduling cycle',
  preemptions: 'Allocations preempted to make room for other jobs',
  failovers: 'Workloads moved off failed hardware',
  cold_starts: 'Inference endpoint replicas started from zero',
};

/** Prometheus exposition (prom-client): gauges read at scrape time, counters and the cycle histogram from Redis. */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  private recorded?: RecordedMetrics;
  private integrity?: IntegritySummary;

  constructor(
    private readonly cluster: ClusterService,
    private readonly repo: MetricsRepository,
    private readonly recorder: MetricsRecorder,
    private readonly integrityStore: IntegrityStore,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    collectDefaultMetrics({ register: this.registry, prefix: 'gantry_api_' });
    const cluster_ = this.cluster;
    new Gauge({
      name: 'gantry_gpus',
      help: 'GPUs by model and state (allocated counts GPU units: MIG slices and shares as fractions)',
      labelNames: ['model', 'state'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const r of (await cluster_.capacity()).byModel) {
          this.set({ model: r.gpuModel, state: 'total' }, r.total);
          this.set({ model: r.gpuModel, state: 'allocated' }, r.allocated);
          this.set({ model: r.gpuModel, state: 'free' }, r.free);
          this.set({ model: r.gpuModel, state: 'unhealthy' }, r.unhealthy);
        }
      },
    });
    const jobs = this.repo;
    // Opaque ids by default: whoever reads the metrics (a shared Prometheus, its dashboards)
    // learns no tenant or team names unless the operator asks for them.
    const names = config.metrics.tenantLabels;
    new Gauge({
      name: 'gantry_queue_depth',
      help: names
        ? 'Pending jobs by team (tenant and team: slugs)'
        : 'Pending jobs by team (opaque ids; GANTRY_METRICS_TENANT_LABELS=true adds tenant and team slugs)',
      labelNames: names ? ['tenant_id', 'team_id', 'tenant', 'team'] : ['tenant_id', 'team_id'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const r of await jobs.queueDepthByTeam({ names })) {
          const ids = { tenant_id: r.tenantId, team_id: r.teamId };
          this.set(names ? { ...ids, tenant: r.tenantSlug ?? '', team: r.teamSlug ?? '' } : ids, r.pending);
        }
      },
    });
    const integrity = () => this.integrity;
    new Gauge({
      name: 'gantry_invariant_violations',
      help: 'Violated database invariants by rule at the last check (the worker checks every GANTRY_INTEGRITY_CHECK_SECONDS); anything above 0 is a bug',
      labelNames: ['rule'],
      registers: [this.registry],
      collect() {
        this.reset();
        const last = integrity();
        if (last) for (const rule of STRICT_RULES) this.set({ rule }, last.byRule[rule] ?? 0);
      },
    });
    new Gauge({
      name: 'gantry_invariant_check_timestamp_seconds',
      help: 'When the invariants were last checked (Unix seconds)',
      registers: [this.registry],
      collect() {
        this.reset();
        const last = integrity();
        if (last) this.set(Date.parse(last.checkedAt) / 1000);
      },
    });
    const recorded = () => this.recorded!;
    for (const name of WORKER_COUNTERS) {
      new Counter({
        name: `gantry_${name}_total`,
        help: COUNTER_HELP[name],
        registers: [this.registry],
        collect() {
          this.reset();
          this.inc(recorded().counters[name]);
        },
      });
    }
  }

  contentType(): string {
    return this.registry.contentType;
  }

  async text(): Promise<string> {
    [this.recorded, this.integrity] = await Promise.all([this.recorder.read(), this.integrityStore.last()]);
    return (await this.registry.metrics()) + histogramText('gantry_scheduling_cycle_seconds', 'Scheduling cycle latency', this.recorded.cycle);
  }
}

/** Prometheus text of a histogram whose cumulative buckets are kept elsewhere (Redis). */
export function histogramText(name: string, help: string, h: RecordedMetrics['cycle']): string {
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} histogram`];
  for (const b of h.buckets) lines.push(`${name}_bucket{le="${b.le}"} ${b.count}`);
  lines.push(`${name}_bucket{le="+Inf"} ${h.count}`, `${name}_sum ${h.sum}`, `${name}_count ${h.count}`);
  return `${lines.join('\n')}\n`;
}
