'use client';

import Link from 'next/link';
import { useQuery } from '@tanstack/react-query';
import { Area, AreaChart, Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { Capacity, GpuHeatmap, UtilizationReport } from '@gantry/contracts';
import { ErrorPanel, Loading, Empty } from '@/components/states';
import { formatClock, formatGpus, formatHours } from '@/lib/format';
import { capacityQuery, heatmapQuery, idleAllocationsQuery, utilizationReportQuery } from '@/lib/queries/utilization';
import { useClient } from '@/lib/session';
import './utilization.css';

const C_CAPACITY = '#9aa6b8';
const C_ALLOC = '#2f6fed';
const C_USED = '#1e8a4c';

/** Measured use (SM activity in GPUs' worth) by model, from the live per-GPU samples. */
export function usedByModel(h: GpuHeatmap): Map<string, number> {
  const used = new Map<string, number>();
  for (let i = 0; i < h.gpus.id.length; i++) {
    const sm = h.gpus.smPct[i];
    if (sm == null) continue;
    const m = h.models[h.gpus.model[i]!]!;
    used.set(m, (used.get(m) ?? 0) + sm / 100);
  }
  return used;
}

/** Capacity, allocated and used GPUs by GPU model (bars), live. */
export function ModelUsageChart() {
  const client = useClient();
  const capacity = useQuery(capacityQuery(client));
  const heat = useQuery(heatmapQuery(client));
  if (capacity.isError) return <ErrorPanel error={capacity.error} onRetry={() => void capacity.refetch()} title="Cannot load capacity" />;
  if (!capacity.data || !heat.data) return <Loading />;
  const used = usedByModel(heat.data);
  const rows = modelRows(capacity.data, used);
  return (
    <div className="card chart-card" data-testid="overview-model-chart">
      <div className="card-head">
        <span className="card-title">Capacity, allocated and used by GPU model</span>
        <span className="muted">used = SM activity, in GPUs</span>
      </div>
      <ResponsiveContainer width="100%" height={220}>
        <BarChart data={rows} margin={{ top: 8, right: 8, bottom: 0, left: -10 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="gpuModel" tick={{ fontSize: 12 }} />
          <YAxis tick={{ fontSize: 12 }} />
          <Tooltip formatter={(v) => formatGpus(Number(v))} />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          <Bar dataKey="capacity" name="Capacity" fill={C_CAPACITY} isAnimationActive={false} />
          <Bar dataKey="allocated" name="Allocated" fill={C_ALLOC} isAnimationActive={false} />
          <Bar dataKey="used" name="Used" fill={C_USED} isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
      <div className="model-usage-row">
        {rows.map((r) => (
          <span
            key={r.gpuModel}
            className="legend-item small"
            data-testid="model-usage"
            data-gpu-model={r.gpuModel}
            data-used={r.used}
            data-allocated={r.allocated}
          >
            <b>{r.gpuModel}</b> {formatGpus(r.used)} used of {formatGpus(r.allocated)} allocated
          </span>
        ))}
      </div>
    </div>
  );
}

function modelRows(c: Capacity, used: Map<string, number>) {
  return c.byModel.map((m) => ({
    gpuModel: m.gpuModel,
    capacity: m.total,
    allocated: m.allocated,
    used: Math.round((used.get(m.gpuModel) ?? 0) * 10) / 10,
  }));
}

/** 24 h trend: average GPUs allocated and busy per bucket (and capacity for the operator). */
export function TrendChart() {
  const client = useClient();
  const report = useQuery(utilizationReportQuery(client, 'gpuModel', { range: '24h' }));
  if (report.isError) return <ErrorPanel error={report.error} onRetry={() => void report.refetch()} title="Cannot load the 24 h trend" />;
  if (!report.data) return <Loading />;
  const data = trendRows(report.data);
  const showCapacity = report.data.totals.capacityGpuHours !== null;
  return (
    <div className="card chart-card" data-testid="overview-trend-chart" data-points={data.length}>
      <div className="card-head">
        <span className="card-title">Last 24 hours</span>
        <span className="muted">average GPUs per {report.data.stepSeconds / 60} min</span>
      </div>
      <ResponsiveContainer width="100%" height={220}>
        <AreaChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: -10 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="label" tick={{ fontSize: 11 }} minTickGap={40} />
          <YAxis tick={{ fontSize: 12 }} />
          <Tooltip formatter={(v) => formatGpus(Number(v))} />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          {showCapacity && <Area type="stepAfter" dataKey="capacity" name="Capacity" stroke={C_CAPACITY} fill="transparent" isAnimationActive={false} />}
          <Area type="monotone" dataKey="allocated" name="Allocated" stroke={C_ALLOC} fill={C_ALLOC} fillOpacity={0.18} isAnimationActive={false} />
          <Area type="monotone" dataKey="used" name="Used (SM)" stroke={C_USED} fill={C_USED} fillOpacity={0.25} isAnimationActive={false} />
        </AreaChart>
      </ResponsiveContainer>
    </div>
  );
}

export function trendRows(r: UtilizationReport) {
  const hours = r.stepSeconds / 3600;
  const n = r.series[0]?.points.length ?? 0;
  return Array.from({ length: n }, (_, k) => {
    let capacity = 0;
    let allocated = 0;
    let used = 0;
    for (const s of r.series) {
      const p = s.points[k]!;
      capacity += p.capacityGpuHours ?? 0;
      allocated += p.allocatedGpuHours;
      used += p.busyGpuHours;
    }
    return {
      label: formatClock(r.series[0]!.points[k]!.t),
      capacity: round1(capacity / hours),
      allocated: round1(allocated / hours),
      used: round1(used / hours),
    };
  });
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/** Per team: GPUs held now against the quota, and the last 24 h. */
export function TeamQuotaTable() {
  const client = useClient();
  const report = useQuery(utilizationReportQuery(client, 'team', { range: '24h' }));
  if (report.isError) return <ErrorPanel error={report.error} onRetry={() => void report.refetch()} title="Cannot load team usage" />;
  if (!report.data) return <Loading />;
  const rows = report.data.series;
  if (!rows.length) return <Empty>No team holds GPUs yet.</Empty>;
  return (
    <div className="card table-card" data-testid="team-usage">
      <div className="card-head">
        <span className="card-title">Teams against quota</span>
        <Link href="/utilization" className="link-muted">
          Team report →
        </Link>
      </div>
      <table className="table">
        <thead>
          <tr>
            <th>Team</th>
            <th className="num">GPUs now</th>
            <th>Against quota limit</th>
            <th className="num">GPU-h (24 h)</th>
            <th className="num">SM use</th>
            <th className="num">Cost (24 h)</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((s) => {
            const now = s.now?.allocatedGpus ?? 0;
            const limit = s.now?.quotaLimit ?? null;
            const guaranteed = s.now?.quotaGuaranteed ?? null;
            const pct = limit ? Math.min(100, (now / limit) * 100) : 0;
            return (
              <tr key={s.key} data-testid="team-usage-row" data-team-id={s.key} data-team-name={s.label} data-allocated={now}>
                <td>{s.label}</td>
                <td className="num mono" data-testid="team-usage-now">
                  {formatGpus(now)}
                </td>
                <td>
                  {limit ? (
                    <div className="quota-bar" title={`${now} of ${limit} (guaranteed ${guaranteed ?? 0})`}>
                      <span style={{ width: `${pct}%` }} />
                      {guaranteed ? <i style={{ left: `${Math.min(100, (guaranteed / limit) * 100)}%` }} /> : null}
                    </div>
                  ) : (
                    <span className="muted">no quota</span>
                  )}
                  {limit ? (
                    <span className="muted small" data-testid="team-usage-quota">
                      {' '}
                      {formatGpus(now)} / {formatGpus(limit)}
                    </span>
                  ) : null}
                </td>
                <td className="num mono">{formatHours(s.totals.allocatedGpuHours)}</td>
                <td className="num mono">{s.totals.smRatio == null ? '–' : `${Math.round(s.totals.smRatio * 100)} %`}</td>
                <td className="num mono">{money(s.totals.cost, report.data.currency)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** The largest allocated-but-idle GPUs, with who holds them. */
export function IdleAllocationsTable() {
  const client = useClient();
  const idle = useQuery(idleAllocationsQuery(client));
  if (idle.isError) return <ErrorPanel error={idle.error} onRetry={() => void idle.refetch()} title="Cannot load idle allocations" />;
  if (!idle.data) return <Loading />;
  return (
    <div className="card table-card" data-testid="idle-allocations" data-count={idle.data.items.length}>
      <div className="card-head">
        <span className="card-title">Allocated but idle</span>
        <span className="muted">
          SM under {idle.data.smThresholdPct} % for more than {Math.round(idle.data.minIdleSeconds / 60)} min
        </span>
      </div>
      {idle.data.items.length === 0 ? (
        <Empty>No idle allocations: every allocated GPU is working.</Empty>
      ) : (
        <table className="table">
          <thead>
            <tr>
              <th>Team</th>
              <th>Job</th>
              <th>GPU</th>
              <th className="num">SM</th>
              <th className="num">Idle for</th>
            </tr>
          </thead>
          <tbody>
            {idle.data.items.map((i) => (
              <tr key={`${i.gpuId}-${i.jobId ?? ''}`} data-testid="idle-row" data-team-name={i.teamName} data-gpu-id={i.gpuId}>
                <td>{i.teamName}</td>
                <td>{i.jobId ? <Link href={`/jobs/${i.jobId}`}>{i.jobName}</Link> : <span className="muted">none</span>}</td>
                <td className="mono">
                  {i.nodeName} #{i.gpuIndex} · {i.gpuModel}
                  {i.gpuUnits < 1 ? ` (${formatGpus(i.gpuUnits)})` : ''}
                </td>
                <td className="num mono">{i.smPct.toFixed(0)} %</td>
                <td className="num mono">{formatIdle(i.idleSeconds)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

export function money(n: number, currency: string): string {
  return new Intl.NumberFormat('en-US', { style: 'currency', currency, maximumFractionDigits: 2 }).format(n);
}

function formatIdle(s: number): string {
  if (s < 3600) return `${Math.max(1, Math.round(s / 60))} min`;
  return `${(s / 3600).toFixed(1)} h`;
}
