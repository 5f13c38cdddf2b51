'use client';

import Link from 'next/link';
import { useRouter } from 'next/navigation';
import type { Job } from '@gantry/contracts';
import { shortAge, formatGpuRequest, isActive, pinnedModel, placementSummary } from '@/lib/format';
import { useTeam } from '@/lib/team';
import { useNow } from '@/lib/use-now';
import { JobActions } from './job-actions';
import { StateBadge } from './state-badge';
import { humanizeMessage } from '@/lib/messages';

export function JobsTable({ jobs, showTeam }: { jobs: Job[]; showTeam: boolean }) {
  const router = useRouter();
  const { teamName } = useTeam();
  const now = useNow(1000);
  return (
    <div className="card table-card">
      <table className="table table-hover" data-testid="jobs-table">
        <thead>
          <tr>
            <th>Job</th>
            <th>State</th>
            <th>Priority</th>
            <th>GPUs requested</th>
            <th>Placement</th>
            <th>Queue · reason</th>
            <th className="num">Age</th>
            <th className="actions-col" aria-label="Actions" />
          </tr>
        </thead>
        <tbody>
          {jobs.map((j) => {
            const model = pinnedModel(j);
            const nodes = placementSummary(j.placement);
            return (
              <tr
                key={j.id}
                data-testid="job-row"
                data-job-id={j.id}
                data-job-name={j.name}
                data-state={j.state}
                className="row-link"
                onClick={(e) => {
                  if ((e.target as HTMLElement).closest('a,button')) return;
                  router.push(`/jobs/${j.id}`);
                }}
              >
                <td className="nowrap job-cell">
                  <Link href={`/jobs/${j.id}`} className="strong-link" data-testid="job-link">
                    {j.name}
                  </Link>
                  <div className="job-sub">
                    <span data-testid="job-kind">{j.kind}</span>
                    {showTeam && <> · {teamName(j.teamId)}</>}
                    {j.preemptible && (
                      <span className="tag" title="May be preempted by higher-priority work">
                        preemptible
                      </span>
                    )}
                  </div>
                </td>
                <td className="nowrap">
                  <StateBadge state={j.state} />
                  {j.progress !== undefined && isActive(j.state) && j.state !== 'pending' && (
                    <span className="mini-progress" title={`${Math.round(j.progress * 100)}% done`}>
                      <span style={{ width: `${Math.round(j.progress * 100)}%` }} />
                    </span>
                  )}
                </td>
                <td>
                  <span className={`prio prio-${j.priority}`}>{j.priority}</span>
                </td>
                <td className="mono" data-testid="job-gpus">
                  {formatGpuRequest(j)}
                  {model && <span className="muted"> · {model}</span>}
                </td>
                <td
                  className="mono placement"
                  data-testid="job-placement"
                  title={(j.placement.length ? j.placement : (j.ranOn ?? [])).map((p) => p.nodeName).join(', ')}
                >
                  {nodes ||
                    (j.ranOn?.length ? (
                      <span className="muted" data-testid="job-ran-on">
                        ran on {placementSummary(j.ranOn)}
                      </span>
                    ) : (
                      <span className="muted">-</span>
                    ))}
                </td>
                <td className="reason" data-testid="job-reason" title={j.reasons[0] ? humanizeMessage(j.reasons[0].message) : undefined}>
                  {j.state === 'pending' ? (
                    <div className="clamp-2">
                      {j.queuePosition !== undefined && (
                        <span className="queue-pos" data-testid="job-queue-position">
                          #{j.queuePosition}
                        </span>
                      )}
                      {j.reasons[0] && humanizeMessage(j.reasons[0].message)}
                    </div>
                  ) : j.reasons[0] && !isActive(j.state) && j.state !== 'succeeded' ? (
                    <div className="clamp-2 muted">{humanizeMessage(j.reasons[0].message)}</div>
                  ) : null}
                </td>
                <td className="num mono muted" title={j.createdAt}>
                  {shortAge(j.createdAt, now)}
                </td>
                <td className="actions-col">
                  <JobActions job={j} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
