'use client';

import Link from 'next/link';
import { useQuery } from '@tanstack/react-query';
import type { Capacity, Job, JobsSummary } from '@gantry/contracts';
import { PageHeader } from '@/components/page-header';
import { CapacityBar } from '@/components/capacity-bar';
import { StateBadge } from '@/components/state-badge';
import { Empty, ErrorPanel, Loading } from '@/components/states';
import { age, formatGpuRequest, formatGpus, formatPercent, STATE_ORDER } from '@/lib/format';
import { jobsSummaryQuery } from '@/lib/queries/jobs';
import { capacityQuery } from '@/lib/queries/utilization';
import { useClient } from '@/lib/session';
import { useTeam } from '@/lib/team';
import { useNow } from '@/lib/use-now';
import { IdleAllocationsTable, ModelUsageChart, TeamQuotaTable, TrendChart } from '@/components/utilization/overview-widgets';
import { humanizeMessage } from '@/lib/messages';

export default function OverviewPage() {
  const client = useClient();
  const { teamId, team } = useTeam();
  const capacity = useQuery(capacityQuery(client));
  const jobs = useQuery(jobsSummaryQuery(client, teamId || undefined));

  return (
    <>
      <PageHeader title="Overview" subtitle={`Cluster capacity, and the workloads of ${team ? team.name : 'all teams'}`} />
      <section className="section">
        <h2 className="section-title">GPU capacity by model</h2>
        {capacity.isError ? (
          <ErrorPanel error={capacity.error} onRetry={() => void capacity.refetch()} title="Cannot load capacity" />
        ) : !capacity.data ? (
          <Loading />
        ) : (
          <CapacityCards capacity={capacity.data} />
        )}
      </section>
      <section className="section" data-testid="overview-utilization">
        <h2 className="section-title">Utilization</h2>
        <div className="chart-grid">
          <ModelUsageChart />
          <TrendChart />
        </div>
      </section>
      <section className="section">
        <div className="table-grid">
          <TeamQuotaTable />
          <IdleAllocationsTable />
        </div>
      </section>
      <section className="section">
        <h2 className="section-title">
          Jobs by state <span className="muted">· {team ? team.name : 'all teams'}</span>
        </h2>
        {jobs.isError ? (
          <ErrorPanel error={jobs.error} onRetry={() => void jobs.refetch()} title="Cannot load jobs" />
        ) : !jobs.data ? (
          <Loading />
        ) : (
          <>
            <JobCounts counts={jobs.data.counts} />
            <PendingQueue jobs={jobs.data.queueHead} />
          </>
        )}
      </section>
    </>
  );
}

function CapacityCards({ capacity }: { capacity: Capacity }) {
  const rows = [...capacity.byModel].sort((a, b) => b.total - a.total || a.gpuModel.localeCompare(b.gpuModel));
  if (rows.length === 0) return <Empty>No GPUs registered in the cluster yet.</Empty>;
  const sum = rows.reduce(
    (acc, r) => ({
      total: acc.total + r.total,
      allocated: acc.allocated + r.allocated,
      free: acc.free + r.free,
      unhealthy: acc.unhealthy + r.unhealthy,
    }),
    { total: 0, allocated: 0, free: 0, unhealthy: 0 },
  );
  return (
    <>
      <div className="kpis" data-testid="capacity-summary">
        <Kpi label="GPUs" value={formatGpus(sum.total)} />
        <Kpi label="Allocated" value={formatGpus(sum.allocated)} tone="alloc" />
        <Kpi label="Free" value={formatGpus(sum.free)} tone="free" />
        <Kpi label="Unhealthy" value={formatGpus(sum.unhealthy)} tone={sum.unhealthy > 0 ? 'bad' : undefined} />
        <Kpi label="Allocation" value={sum.total ? formatPercent(sum.allocated / sum.total) : '-'} />
      </div>
      <div className="card-grid">
        {rows.map((r) => (
          <div className="card capacity-card" key={r.gpuModel} data-testid="capacity-card" data-gpu-model={r.gpuModel}>
            <div className="card-head">
              <span className="card-title">{r.gpuModel}</span>
              <span className="muted">{r.total ? formatPercent(r.allocated / r.total) : '0%'} allocated</span>
            </div>
            <CapacityBar total={r.total} allocated={r.allocated} unhealthy={r.unhealthy} />
            <dl className="capacity-figures">
              <div>
                <dt>Total</dt>
                <dd data-testid="capacity-total">{formatGpus(r.total)}</dd>
              </div>
              <div>
                <dt>
                  <i className="dot dot-alloc" />
                  Allocated
                </dt>
                <dd data-testid="capacity-allocated">{formatGpus(r.allocated)}</dd>
              </div>
              <div>
                <dt>
                  <i className="dot dot-free" />
                  Free
                </dt>
                <dd data-testid="capacity-free">{formatGpus(r.free)}</dd>
              </div>
              <div>
                <dt>
                  <i className="dot dot-bad" />
                  Unhealthy
                </dt>
                <dd data-testid="capacity-unhealthy" className={r.unhealthy > 0 ? 'text-bad' : undefined}>
                  {formatGpus(r.unhealthy)}
                </dd>
              </div>
            </dl>
          </div>
        ))}
      </div>
    </>
  );
}

function Kpi({ label, value, tone }: { label: string; value: string; tone?: string }) {
  return (
    <div className={`kpi${tone ? ` kpi-${tone}` : ''}`}>
      <div className="kpi-value">{value}</div>
      <div className="kpi-label">{label}</div>
    </div>
  );
}

function JobCounts({ counts }: { counts: JobsSummary['counts'] }) {
  return (
    <div className="state-counts">
      {STATE_ORDER.map((s) => (
        <Link href={`/jobs?state=${s}`} key={s} className="state-count" data-testid="job-count" data-state={s}>
          <span className="state-count-value" data-testid="job-count-value">
            {counts[s]}
          </span>
          <span className={`state-count-label state-text-${s}`}>{s}</span>
        </Link>
      ))}
    </div>
  );
}

/** The first pending jobs in queue order, as the API orders them. */
function PendingQueue({ jobs: pending }: { jobs: Job[] }) {
  const now = useNow(5000);
  if (pending.length === 0) return null;
  return (
    <div className="card table-card">
      <div className="card-head">
        <span className="card-title">Head of the queue</span>
        <Link href="/jobs" className="link-muted">
          All jobs →
        </Link>
      </div>
      <table className="table">
        <thead>
          <tr>
            <th className="num">#</th>
            <th>Job</th>
            <th>State</th>
            <th>GPUs</th>
            <th>Why pending</th>
            <th className="num">Waiting</th>
          </tr>
        </thead>
        <tbody>
          {pending.map((j) => (
            <tr key={j.id}>
              <td className="num mono">{j.queuePosition ?? '-'}</td>
              <td>
                <Link href={`/jobs/${j.id}`} className="strong-link">
                  {j.name}
                </Link>
              </td>
              <td>
                <StateBadge state={j.state} />
              </td>
              <td className="mono">{formatGpuRequest(j)}</td>
              <td className="reason">{j.reasons[0] ? humanizeMessage(j.reasons[0].message) : '-'}</td>
              <td className="num mono">{age(j.createdAt, now)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
