'use client';

import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Area, AreaChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { UtilizationGroupBy, UtilizationReport } from '@gantry/contracts';
import { PageHeader } from '@/components/page-header';
import { Empty, ErrorPanel, Loading } from '@/components/states';
import { money } from '@/components/utilization/overview-widgets';
import '@/components/utilization/utilization.css';
import { describeError } from '@/lib/api';
import { REPORT_RANGES, utilizationReportQuery, type ReportRange } from '@/lib/queries/utilization';
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
  const [range, setRange] = useState<ReportRange>('24h');
  const report = useQuery(utilizationReportQuery(client, groupBy, range));
  const [exportError, setExportError] = useState<string | null>(null);

  const exportCsv = async () => {
    setExportError(null);
    try {
      const to = new Date();
      const csv = await client.utilization.csv({
        groupBy,
        from: new Date(to.getTime() - REPORT_RANGES[range].ms).toISOString(),
        to: to.toISOString(),
        step: REPORT_RANGES[range].step,
      });
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
          <select className="select-sm" data-testid="utilization-range" value={range} onChange={(e) => setRange(e.target.value as ReportRange)}>
            {Object.entries(REPORT_RANGES).map(([k, r]) => (
              <option key={k} value={k}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
        {exportError && (
          <span className="inline-error" data-testid="utilization-export-error">
            {exportError}
          </span>
        )}
      </div>
      {report.isError ? (
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
          label={`Energy measured (estimate ${r.totals.energyEstimateKWh.toFixed(1)} kWh)`}
          value={`${r.totals.energyKWh.toFixed(1)} kWh`}
          testId="utilization-total-energy"
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
              <th className="num" title={ENERGY_LEGEND}>
                Energy kWh measured (estimate)
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
                <td className="num mono">
                  {s.totals.energyKWh.toFixed(2)} ({s.totals.energyEstimateKWh.toFixed(2)})
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
        Energy: {ENERGY_LEGEND}
      </p>
      <p className="muted small" data-testid="utilization-prices">
        Prices per GPU-hour: {r.prices.map((p) => `${p.gpuModel} ${money(p.pricePerGpuHour, r.currency)} (${p.idleW}/${p.busyW} W idle/busy)`).join(' · ')}
      </p>
    </>
  );
}

const hoursText = (h: number) => h.toFixed(h < 10 ? 2 : 1);

/** Why the two energy figures differ (the table's header tooltip and the legend under it). */
const ENERGY_LEGEND =
  'Measured: the GPUs’ sampled power draw over the allocated time. Estimate: the GPU model’s rated busy and idle watts times the busy and idle GPU-hours. They differ by how far real draw is from the rated figures.';

function Kpi({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <div className="kpi" data-testid={testId}>
      <div className="kpi-value">{value}</div>
      <div className="kpi-label">{label}</div>
    </div>
  );
}
