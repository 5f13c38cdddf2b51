'use client';

import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Area, AreaChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { MAX_UTILIZATION_RANGE_DAYS, type UtilizationGroupBy, type UtilizationReport } from '@gantry/contracts';
import { PageHeader } from '@/components/page-header';
import { Empty, ErrorPanel, Loading } from '@/components/states';
import { money } from '@/components/utilization/overview-widgets';
import '@/components/utilization/utilization.css';
import { describeError } from '@/lib/api';
import { REPORT_RANGES, utilizationReportQuery, windowQuery, type ReportRange, type ReportWindow } from '@/lib/queries/utilization';
import { useClient } from '@/lib/session';
import { formatMinute } from '@/lib/format';

const GROUPS: { value: UtilizationGroupBy; label: string }[] = [
  { value: 'team', label: 'Team' },
  { value: 'gpuModel', label: 'GPU model' },
  { value: 'node', label: 'Node' },
  { value: 'tenant', label: 'Tenant' },
];
const COLORS = ['#2f6fed', '#1e8a4c', '#a76205', '#6b46c1', '#d0342c', '#0f8b8d', '#8a5a44', '#5b6b82'];
const TOP = 8;

export default function UtilizationPage() {
  const client = useClient();
  const [groupBy, setGroupBy] = useState<UtilizationGroupBy>('team');
  const [range, setRange] = useState<ReportRange | 'custom'>('24h');
  const [fromLocal, setFromLocal] = useState(() => localOf(new Date(Date.now() - 7 * 86_400_000)));
  const [toLocal, setToLocal] = useState(() => localOf(new Date()));
  const picked = range === 'custom' ? pickedWindow(fromLocal, toLocal) : null;
  const fault = picked && 'problem' in picked ? picked : null;
  const reportWindow: ReportWindow | null = range !== 'custom' ? { range } : picked && 'from' in picked ? picked : null;
  const report = useQuery({ ...utilizationReportQuery(client, groupBy, reportWindow ?? { range: '24h' }), enabled: reportWindow !== null });
  const [exportError, setExportError] = useState<string | null>(null);

  const exportCsv = async () => {
    setExportError(null);
    if (!reportWindow) return;
    try {
      const csv = await client.utilization.csv({ groupBy, ...windowQuery(reportWindow) });
      const url = URL.createObjectURL(new Blob([csv], { type: 'text/csv' }));
      const a = document.createElement('a');
      a.href = url;
      a.download = `gantry-utilization-${groupBy}-${range}.csv`;
      a.click();
      URL.revokeObjectURL(url);
    } catch (e) {
      setExportError(describeError(e));
    }
  };

  return (
    <>
      <PageHeader
        title="Utilization"
        subtitle="GPU-hours, measured use, energy and cost (chargeback)"
        actions={
          <button type="button" className="btn btn-outline btn-sm" data-testid="utilization-export" onClick={() => void exportCsv()}>
            Export CSV
          </button>
        }
      />
      <div className="util-toolbar">
        <label>
          Group by
          <select className="select-sm" data-testid="utilization-group-by" value={groupBy} onChange={(e) => setGroupBy(e.target.value as UtilizationGroupBy)}>
            {GROUPS.map((g) => (
              <option key={g.value} value={g.value}>
                {g.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Range
          <select className="select-sm" data-testid="utilization-range" value={range} onChange={(e) => setRange(e.target.value as ReportRange | 'custom')}>
            {Object.entries(REPORT_RANGES).map(([k, r]) => (
              <option key={k} value={k}>
                {r.label}
              </option>
            ))}
            <option value="custom">Custom range…</option>
          </select>
        </label>
        {range === 'custom' && (
          <>
            <label>
              From
              <input
                type="datetime-local"
                className="input-sm"
                data-testid="utilization-from"
                value={fromLocal}
                onChange={(e) => setFromLocal(e.target.value)}
                aria-invalid={fault?.field === 'from' || undefined}
              />
            </label>
            <label>
              To
              <input
                type="datetime-local"
                className="input-sm"
                data-testid="utilization-to"
                value={toLocal}
                onChange={(e) => setToLocal(e.target.value)}
                aria-invalid={fault?.field === 'to' || undefined}
              />
            </label>
            {fault && (
              <span className="inline-error" role="alert" data-testid="utilization-range-error">
                {fault.field === 'from' ? 'From' : 'To'}: {fault.problem}
              </span>
            )}
          </>
        )}
        {exportError && (
          <span className="inline-error" data-testid="utilization-export-error">
            {exportError}
          </span>
        )}
      </div>
      {!reportWindow ? (
        <Empty>Pick a range: “to” after “from”, at most {MAX_UTILIZATION_RANGE_DAYS} days.</Empty>
      ) : report.isError ? (
        <ErrorPanel error={report.error} onRetry={() => void report.refetch()} title="Cannot load the report" />
      ) : !report.data ? (
        <Loading />
      ) : (
        <Report r={report.data} />
      )}
    </>
  );
}

function Report({ r }: { r: UtilizationReport }) {
  if (!r.series.length) return <Empty>No usage in this range.</Empty>;
  const top = r.series.slice(0, TOP);
  const hours = r.stepSeconds / 3600;
  const data = (top[0]?.points ?? []).map((p, k) => {
    const row: Record<string, number | string> = {
      label: formatMinute(p.t),
    };
    for (const s of top) row[s.key] = Math.round((s.points[k]!.allocatedGpuHours / hours) * 100) / 100;
    return row;
  });
  const showCapacity = r.totals.capacityGpuHours !== null;
  return (
    <>
      <div className="kpis" data-testid="utilization-totals">
        <Kpi label="GPU-hours allocated" value={hoursText(r.totals.allocatedGpuHours)} testId="utilization-total-gpu-hours" />
        <Kpi label="GPU-hours busy (SM)" value={hoursText(r.totals.busyGpuHours)} />
        <Kpi label="SM use of allocated" value={r.totals.smRatio == null ? '–' : `${Math.round(r.totals.smRatio * 100)} %`} />
        <Kpi
          label="Allocated but idle GPU-hours"
          value={hoursText(r.totals.idleGpuHours)}
          testId="utilization-total-idle"
          title={`GPU-hours held on GPUs whose SM use was under the idle threshold (as on the Overview's idle list)`}
        />
        <Kpi
          label={`Energy, measured¹ · est.² ${r.totals.energyEstimateKWh.toFixed(1)} kWh`}
          value={`${r.totals.energyKWh.toFixed(1)} kWh`}
          testId="utilization-total-energy"
          title={energyLegend(r)}
        />
        {r.energySavedKWh !== null && (
          <Kpi label="Saved by power management" value={`${r.energySavedKWh.toFixed(r.energySavedKWh < 10 ? 3 : 1)} kWh`} testId="utilization-energy-saved" />
        )}
        <Kpi label="Cost" value={money(r.totals.cost, r.currency)} testId="utilization-total-cost" />
      </div>
      <div className="card chart-card section" data-testid="utilization-chart">
        <div className="card-head">
          <span className="card-title">Allocated GPUs over time</span>
          <span className="muted">
            average per {r.stepSeconds >= 3600 ? `${r.stepSeconds / 3600} h` : `${r.stepSeconds / 60} min`} · {r.resolution} rollups
            {r.series.length > TOP ? ` · top ${TOP} of ${r.series.length}` : ''}
          </span>
        </div>
        <ResponsiveContainer width="100%" height={260}>
          <AreaChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: -10 }}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            <XAxis dataKey="label" tick={{ fontSize: 11 }} minTickGap={50} />
            <YAxis tick={{ fontSize: 12 }} />
            <Tooltip />
            <Legend wrapperStyle={{ fontSize: 12 }} />
            {top.map((s, i) => (
              <Area
                key={s.key}
                type="monotone"
                dataKey={s.key}
                name={s.label}
                stackId="1"
                stroke={COLORS[i % COLORS.length]}
                fill={COLORS[i % COLORS.length]}
                fillOpacity={0.35}
                isAnimationActive={false}
              />
            ))}
          </AreaChart>
        </ResponsiveContainer>
      </div>
      <div className="card table-card">
        <table className="table" data-testid="utilization-table">
          <thead>
            <tr>
              <th>{GROUPS.find((g) => g.value === r.groupBy)?.label}</th>
              {showCapacity && <th className="num">Capacity GPU-h</th>}
              <th className="num">Allocated GPU-h</th>
              {showCapacity && <th className="num">Allocation</th>}
              <th className="num">Busy GPU-h</th>
              <th className="num">SM use</th>
              <th className="num" title="Allocated but idle: GPU-hours held while the GPU's SM use was under the idle threshold">
                Idle GPU-h
              </th>
              <th className="num" title={energyLegend(r)}>
                kWh measured¹ · est.²
              </th>
              <th className="num">Cost</th>
            </tr>
          </thead>
          <tbody>
            {r.series.map((s) => (
              <tr key={s.key} data-testid="utilization-row" data-key={s.key} data-label={s.label}>
                <td>{s.label}</td>
                {showCapacity && <td className="num mono">{(s.totals.capacityGpuHours ?? 0).toFixed(2)}</td>}
                <td className="num mono" data-testid="utilization-gpu-hours">
                  {s.totals.allocatedGpuHours.toFixed(2)}
                </td>
                {showCapacity && <td className="num mono">{`${Math.round((s.totals.allocationRatio ?? 0) * 100)} %`}</td>}
                <td className="num mono">{s.totals.busyGpuHours.toFixed(2)}</td>
                <td className="num mono">{s.totals.smRatio == null ? '–' : `${Math.round(s.totals.smRatio * 100)} %`}</td>
                <td className="num mono" data-testid="utilization-idle-gpu-hours">
                  {s.totals.idleGpuHours.toFixed(2)}
                </td>
                <td className="num mono" data-testid="utilization-energy">
                  {s.totals.energyKWh.toFixed(2)} · est. {s.totals.energyEstimateKWh.toFixed(2)}
                </td>
                <td className="num mono" data-testid="utilization-cost">
                  {money(s.totals.cost, r.currency)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p className="muted small" data-testid="utilization-energy-legend">
        {energyLegend(r)}
      </p>
      <p className="muted small" data-testid="utilization-prices">
        Prices per GPU-hour: {r.prices.map((p) => `${p.gpuModel} ${money(p.pricePerGpuHour, r.currency)} (${p.idleW}/${p.busyW} W idle/busy)`).join(' · ')}
      </p>
    </>
  );
}

const hoursText = (h: number) => h.toFixed(h < 10 ? 2 : 1);

/**
 * Where the two energy figures come from and why they differ: the card's tooltip, the table
 * header's tooltip and the footnote under the table say the same.
 */
function energyLegend(r: UtilizationReport): string {
  const base = r.totals.capacityGpuHours !== null ? 'every GPU of the capacity (free ones at idle watts)' : 'the allocated GPU-hours';
  return (
    `¹ Measured: each GPU's power draw as the driver samples it (every telemetry tick), summed over ${base}. ` +
    `² Estimated: the GPU model's rated watts (listed below) × the busy GPU-hours at busy watts and the rest of ${base} at idle watts. ` +
    'The two differ by how far the real draw is from the rated figures, and by time not sampled (a GPU that sent no sample counts in the estimate only).'
  );
}

/** A Date as a datetime-local value, in the browser's time zone. */
function localOf(d: Date): string {
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/** The picked from/to as a report window, or the field at fault and why (the same rules the API applies). */
function pickedWindow(fromLocal: string, toLocal: string): { from: string; to: string } | { field: 'from' | 'to'; problem: string } {
  const from = new Date(fromLocal);
  const to = new Date(toLocal);
  if (!fromLocal || Number.isNaN(from.getTime())) return { field: 'from', problem: 'pick a date and time' };
  if (!toLocal || Number.isNaN(to.getTime())) return { field: 'to', problem: 'pick a date and time' };
  if (to.getTime() <= from.getTime()) return { field: 'to', problem: 'must be after “from”' };
  if (to.getTime() - from.getTime() > MAX_UTILIZATION_RANGE_DAYS * 86_400_000)
    return { field: 'from', problem: `at most ${MAX_UTILIZATION_RANGE_DAYS} days before “to”` };
  return { from: from.toISOString(), to: to.toISOString() };
}

function Kpi({ label, value, testId, title }: { label: string; value: string; testId?: string; title?: string }) {
  return (
    <div className="kpi" data-testid={testId} title={title}>
      <div className="kpi-value">{value}</div>
      <div className="kpi-label">{label}</div>
    </div>
  );
}
