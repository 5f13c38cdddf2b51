'use client';

import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { PlannerResult, PlannerRun } from '@gantry/contracts';
import { formatDuration } from '@/lib/format';
import { download, plannerCsv, plannerJson, relativeChange } from '@/lib/planner-export';

type PolicyResult = PlannerResult['policies'][number];

export const POLICY_COLORS: Record<string, string> = {
  gantry: '#2f6fed',
  fgd: '#1e8a4c',
  'best-fit': '#a76205',
  'kubernetes-default': '#5b6b82',
};

const pct = (v: number | null) => (v === null ? '–' : `${v.toFixed(1)} %`);
const kwh = (v: number) => (v >= 10_000 ? `${(v / 1000).toFixed(1)} MWh` : `${v.toFixed(1)} kWh`);
const change = (v: number | null) => (v === null ? '–' : `${v > 0 ? '+' : ''}${v.toFixed(1)} %`);

/** The comparison of a finished run: charts per policy, the gains against kubernetes-default, export. */
export function PlannerResults({ run }: { run: PlannerRun }) {
  const r = run.result!;
  const base = r.policies.find((p) => p.policy === 'kubernetes-default');
  return (
    <div data-testid="planner-results">
      <div className="planner-export">
        <span className="muted small" data-testid="planner-summary">
          {r.jobs.toLocaleString('en-US')} jobs on {r.nodes.toLocaleString('en-US')} nodes / {r.gpus.toLocaleString('en-US')} GPUs over{' '}
          {formatDuration(r.horizonSeconds * 1000)} simulated
          {r.power ? ' · power management on' : ' · power management off'}
        </span>
        <button
          type="button"
          className="btn btn-outline btn-sm"
          data-testid="planner-export-csv"
          onClick={() => download(plannerCsv(run), `gantry-plan-${run.id}.csv`, 'text/csv')}
        >
          Export CSV
        </button>
        <button
          type="button"
          className="btn btn-outline btn-sm"
          data-testid="planner-export-json"
          onClick={() => download(plannerJson(run), `gantry-plan-${run.id}.json`, 'application/json')}
        >
          Export JSON
        </button>
      </div>
      <div className="card table-card section">
        <table className="table" data-testid="planner-table">
          <caption className="card-head card-title planner-caption">Figures per policy{base ? ' and change against kubernetes-default' : ''}</caption>
          <thead>
            <tr>
              <th scope="col">Policy</th>
              <th scope="col" className="num">
                GPU util.
              </th>
              <th scope="col" className="num">
                GPU memory
              </th>
              <th scope="col" className="num">
                Energy
              </th>
              <th scope="col" className="num">
                Wait p50 / p95 / max
              </th>
              <th scope="col" className="num">
                Unplaced
              </th>
              <th scope="col" className="num">
                Fragmentation
              </th>
            </tr>
          </thead>
          <tbody>
            {r.policies.map((p) => (
              <PolicyRow key={p.policy} p={p} base={base} />
            ))}
          </tbody>
        </table>
      </div>
      <div className="planner-charts">
        <UtilisationChart r={r} />
        <EnergyChart r={r} />
        <WaitChart r={r} />
      </div>
    </div>
  );
}

function PolicyRow({ p, base }: { p: PolicyResult; base: PolicyResult | undefined }) {
  const vs = base && p.policy !== 'kubernetes-default';
  const gain = (v: number, b: number) => (vs ? <span className="planner-gain"> ({change(relativeChange(v, b))})</span> : null);
  return (
    <tr data-testid="planner-row" data-policy={p.policy}>
      <th scope="row" className="mono">
        <span className="planner-swatch" style={{ background: POLICY_COLORS[p.policy] }} aria-hidden="true" />
        {p.policy}
      </th>
      <td className="num mono" data-testid="planner-util">
        {pct(p.gpuUtilisationPct)}
        {gain(p.gpuUtilisationPct, base?.gpuUtilisationPct ?? 0)}
      </td>
      <td className="num mono">
        {pct(p.gpuMemoryUsePct)}
        {gain(p.gpuMemoryUsePct, base?.gpuMemoryUsePct ?? 0)}
      </td>
      <td className="num mono" data-testid="planner-energy">
        {kwh(p.energyKWh)}
        {gain(p.energyKWh, base?.energyKWh ?? 0)}
      </td>
      <td className="num mono">
        {formatDuration(p.waitP50Seconds * 1000)} / {formatDuration(p.waitP95Seconds * 1000)} / {formatDuration(p.waitMaxSeconds * 1000)}
      </td>
      <td className="num mono">{p.unplaced}</td>
      <td className="num mono">{pct(p.fragmentationPct)}</td>
    </tr>
  );
}

/** Simulated time as an axis label: hours for a short replay, days for a long one. */
function timeLabel(t: number, horizon: number): string {
  return horizon > 3 * 86_400 ? `${(t / 86_400).toFixed(1)} d` : `${(t / 3600).toFixed(1)} h`;
}

function UtilisationChart({ r }: { r: PlannerResult }) {
  const first = r.policies[0]?.series ?? [];
  const data = first.map((pt, k) => {
    const row: Record<string, number | string> = { label: timeLabel(pt.t, r.horizonSeconds) };
    for (const p of r.policies) row[p.policy] = Math.round((p.series[k]?.smUtilisationPct ?? 0) * 10) / 10;
    return row;
  });
  return (
    <figure className="card chart-card" data-testid="planner-chart-utilisation">
      <figcaption className="card-head">
        <span className="card-title">GPU utilisation over time</span>
        <span className="muted">SM use of the powered GPUs, %</span>
      </figcaption>
      <ResponsiveContainer width="100%" height={240}>
        <LineChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: -10 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="label" tick={{ fontSize: 11 }} minTickGap={40} />
          <YAxis tick={{ fontSize: 12 }} domain={[0, 100]} />
          <Tooltip />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          {r.policies.map((p) => (
            <Line key={p.policy} type="stepAfter" dataKey={p.policy} stroke={POLICY_COLORS[p.policy]} dot={false} strokeWidth={1.6} isAnimationActive={false} />
          ))}
        </LineChart>
      </ResponsiveContainer>
    </figure>
  );
}

function EnergyChart({ r }: { r: PlannerResult }) {
  const data = r.policies.map((p) => ({
    policy: p.policy,
    energy: Math.round(p.energyKWh * 10) / 10,
    withoutPm: Math.round((p.energyWithoutPowerManagementKWh ?? p.energyKWh) * 10) / 10,
  }));
  return (
    <figure className="card chart-card" data-testid="planner-chart-energy">
      <figcaption className="card-head">
        <span className="card-title">Energy</span>
        <span className="muted">kWh over the replay</span>
      </figcaption>
      <ResponsiveContainer width="100%" height={240}>
        <BarChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: -4 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="policy" tick={{ fontSize: 11 }} interval={0} />
          <YAxis tick={{ fontSize: 12 }} />
          <Tooltip />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          <Bar dataKey="energy" name="as planned" fill="#2f6fed" isAnimationActive={false} />
          <Bar dataKey="withoutPm" name="without power management" fill="#9aa8bd" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </figure>
  );
}

/** A wait bucket's bound: "60 s", "15 min", "4 h", "1 d". */
function bound(s: number): string {
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${s / 60} min`;
  if (s < 86_400) return `${s / 3600} h`;
  return `${s / 86_400} d`;
}

function WaitChart({ r }: { r: PlannerResult }) {
  const buckets = r.policies[0]?.waitHistogram ?? [];
  const data = buckets.map((b, k) => {
    const prev = k === 0 ? 0 : buckets[k - 1]!.le;
    const row: Record<string, number | string> = {
      bucket: b.le < 0 ? `> ${bound(prev)}` : b.le === 0 ? 'no wait' : `≤ ${bound(b.le)}`,
    };
    for (const p of r.policies) row[p.policy] = p.waitHistogram[k]?.count ?? 0;
    return row;
  });
  return (
    <figure className="card chart-card" data-testid="planner-chart-waits">
      <figcaption className="card-head">
        <span className="card-title">Queue waits</span>
        <span className="muted">jobs per wait bucket</span>
      </figcaption>
      <ResponsiveContainer width="100%" height={240}>
        <BarChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: -4 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="bucket" tick={{ fontSize: 11 }} />
          <YAxis tick={{ fontSize: 12 }} />
          <Tooltip />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          {r.policies.map((p) => (
            <Bar key={p.policy} dataKey={p.policy} fill={POLICY_COLORS[p.policy]} isAnimationActive={false} />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </figure>
  );
}
