'use client';

import Link from 'next/link';
import { useParams, useRouter } from 'next/navigation';
import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { JobDetail } from '@gantry/contracts';
import { JobActions } from '@/components/job-actions';
import { JobLogsPanel } from '@/components/job-logs-panel';
import { formFromJob, JobSubmitDialog } from '@/components/job-submit-form';
import { PageHeader } from '@/components/page-header';
import { StateBadge } from '@/components/state-badge';
import { StatePath } from '@/components/state-path';
import { Timeline } from '@/components/timeline';
import { Empty, ErrorPanel, Loading } from '@/components/states';
import { isApiError } from '@/lib/api';
import { age, formatDuration, formatGpuRequest, formatMiB, formatTime, gpuEquivalent, formatGpus, isActive, placementGpus } from '@/lib/format';
import { jobDetailQuery } from '@/lib/queries/jobs';
import { useClient } from '@/lib/session';
import { useTeam } from '@/lib/team';
import { useNow } from '@/lib/use-now';
import { humanizeMessage } from '@/lib/messages';

export default function JobDetailPage() {
  const { id } = useParams<{ id: string }>();
  const client = useClient();
  const job = useQuery(jobDetailQuery(client, id));

  const crumbs = (
    <>
      <Link href="/jobs">Jobs</Link> <span className="crumb-sep">/</span>
    </>
  );

  if (!job.data) {
    return (
      <>
        <PageHeader title={job.isError ? 'Job' : 'Loading job…'} crumbs={crumbs} />
        {job.isError ? (
          isApiError(job.error) && job.error.status === 404 ? (
            <Empty>
              No job <code>{id}</code>. <Link href="/jobs">Back to jobs</Link>
            </Empty>
          ) : (
            <ErrorPanel error={job.error} onRetry={() => void job.refetch()} title="Cannot load the job" />
          )
        ) : (
          <Loading />
        )}
      </>
    );
  }
  return <JobView job={job.data} crumbs={crumbs} stale={job.isError} />;
}

function JobView({ job, crumbs, stale }: { job: JobDetail; crumbs: React.ReactNode; stale: boolean }) {
  const now = useNow(1000);
  const { teamName } = useTeam();
  const r = job.resources;
  const running = job.startedAt ? (job.finishedAt ? Date.parse(job.finishedAt) : now) - Date.parse(job.startedAt) : undefined;
  const waited = (job.startedAt ? Date.parse(job.startedAt) : job.finishedAt ? Date.parse(job.finishedAt) : now) - Date.parse(job.createdAt);
  const events = [...job.events].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  const router = useRouter();
  const [cloning, setCloning] = useState(false);

  return (
    <div data-testid="job-detail" data-job-id={job.id} data-job-name={job.name} data-state={job.state}>
      <PageHeader
        crumbs={crumbs}
        title={
          <>
            {job.name} <StateBadge state={job.state} />
          </>
        }
        subtitle={
          <>
            <span className="mono">{job.id}</span> · {job.kind} · team {teamName(job.teamId)} · created {age(job.createdAt, now)} ago
            {isActive(job.state) && <span className="live-dot" title="Refreshed every 2 seconds" />}
          </>
        }
        actions={
          <>
            <JobActions job={job} size="md" />
            <button type="button" className="btn btn-outline" data-testid="job-clone" onClick={() => setCloning(true)}>
              {isActive(job.state) ? 'Clone' : 'Resubmit'}
            </button>
          </>
        }
      />
      {stale && <ErrorPanel error={new Error('refresh failed; showing the last answer')} title="Stale" />}
      <StatePath job={job} now={now} />

      {job.progress !== undefined && (
        <div className="card progress-card" data-testid="job-progress" data-progress={job.progress}>
          <div className="card-head">
            <span className="card-title">Progress</span>
            <span className="mono">{Math.round(job.progress * 100)}%</span>
          </div>
          <div className="bar bar-lg">
            <span className={`bar-seg ${job.state === 'failed' ? 'bar-bad' : 'bar-alloc'}`} style={{ width: `${job.progress * 100}%` }} />
          </div>
        </div>
      )}

      <div className="detail-grid">
        <div className="card">
          <div className="card-head">
            <span className="card-title">Request</span>
          </div>
          <dl className="kv">
            <dt>GPUs</dt>
            <dd className="mono" data-testid="job-gpus">
              {formatGpuRequest(job)}
              {r.gpus === undefined && r.gpuModel ? ` · ${r.gpuModel}` : ''}
            </dd>
            <dt>GPU equivalent</dt>
            <dd className="mono">{formatGpus(gpuEquivalent(job))}</dd>
            <dt>Replicas</dt>
            <dd>{job.replicas > 1 ? `${job.replicas} (gang: all or nothing)` : '1'}</dd>
            <dt>Per replica</dt>
            <dd className="mono">
              {r.gpus !== undefined ? `${r.gpus} GPU` : r.migProfile ? `MIG ${r.migProfile}` : `${r.gpuFraction} GPU share`} · {r.cpuMilli / 1000} CPU ·{' '}
              {formatMiB(r.memoryMiB)}
            </dd>
            <dt>GPU model</dt>
            <dd>{r.gpuModel ?? 'any'}</dd>
            <dt>Topology</dt>
            <dd>
              {job.topology.level === 'any' ? 'any' : `same ${job.topology.level}`}
              {job.topology.level !== 'any' && (job.topology.required ? ' (required)' : ' (preferred)')}
            </dd>
            <dt>Priority</dt>
            <dd>
              <span className={`prio prio-${job.priority}`}>{job.priority}</span>
              {job.preemptible ? ' · preemptible' : ' · not preemptible'}
            </dd>
          </dl>
        </div>
        <div className="card">
          <div className="card-head">
            <span className="card-title">Timing</span>
          </div>
          <dl className="kv">
            <dt>Created</dt>
            <dd>{formatTime(job.createdAt)}</dd>
            <dt>Started</dt>
            <dd>{formatTime(job.startedAt)}</dd>
            <dt>Finished</dt>
            <dd>{formatTime(job.finishedAt)}</dd>
            <dt>{job.startedAt ? 'Waited' : 'Waiting'}</dt>
            <dd className="mono">{formatDuration(waited)}</dd>
            <dt>Run time</dt>
            <dd className="mono">{running !== undefined ? formatDuration(running) : '-'}</dd>
            {job.state === 'pending' && (
              <>
                <dt>Queue position</dt>
                <dd className="mono" data-testid="job-queue-position">
                  {job.queuePosition !== undefined ? `#${job.queuePosition}` : '-'}
                </dd>
              </>
            )}
          </dl>
        </div>
      </div>

      {job.reasons.length > 0 && (
        <section className="section">
          <h2 className="section-title">{job.state === 'pending' ? 'Why pending' : 'Reasons'}</h2>
          <ul className="reasons" data-testid="job-reasons">
            {job.reasons.map((x, i) => (
              <li key={i} data-testid="job-reason" data-code={x.code}>
                <span>{humanizeMessage(x.message)}</span>
              </li>
            ))}
          </ul>
        </section>
      )}

      <section className="section">
        <h2 className="section-title">Placement</h2>
        {job.placement.length === 0 && !job.ranOn?.length ? (
          <Empty>
            {job.state === 'suspended' ? 'Suspended: no GPUs held; resume to queue it again.' : isActive(job.state) ? 'Not placed yet.' : 'No GPUs held.'}
          </Empty>
        ) : (
          <div className="card table-card">
            {job.placement.length === 0 && (
              <div className="pad muted small" data-testid="job-ran-on">
                {job.state === 'suspended' ? 'Suspended: no GPUs held now.' : 'No GPUs held now.'} Where its last run was placed:
              </div>
            )}
            <table className="table" data-testid={job.placement.length ? 'job-placement' : 'job-last-placement'}>
              <thead>
                <tr>
                  <th className="num">Replica</th>
                  <th>Node</th>
                  <th>GPUs</th>
                </tr>
              </thead>
              <tbody>
                {[...(job.placement.length ? job.placement : (job.ranOn ?? []))]
                  .sort((a, b) => a.replica - b.replica)
                  .map((p) => (
                    <tr key={`${p.replica}-${p.nodeId}`} data-testid="placement-row" data-node-name={p.nodeName}>
                      <td className="num mono">{p.replica}</td>
                      <td>
                        <Link href={`/cluster/nodes/${p.nodeId}`} className="strong-link mono">
                          {p.nodeName || p.nodeId}
                        </Link>
                      </td>
                      <td className="mono">{placementGpus(p)}</td>
                    </tr>
                  ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <JobLogsPanel jobId={job.id} active={isActive(job.state)} />

      {cloning && (
        <JobSubmitDialog
          title={`Resubmit ${job.name}`}
          initial={formFromJob(job)}
          onClose={() => setCloning(false)}
          onSubmitted={(j) => {
            setCloning(false);
            router.push(`/jobs/${j.id}`);
          }}
        />
      )}

      <section className="section">
        <h2 className="section-title">Events</h2>
        {events.length === 0 ? <Empty>No events yet.</Empty> : <Timeline events={events} testId="job-events" itemTestId="job-event" />}
      </section>
    </div>
  );
}
