'use client';

import Link from 'next/link';
import { useQuery } from '@tanstack/react-query';
import { PageHeader } from '@/components/page-header';
import { Empty, ErrorPanel, Loading } from '@/components/states';
import { fairnessQuery } from '@/lib/queries/fairness';
import { useClient } from '@/lib/session';

const num = (n: number, digits = 1) => (Math.round(n * 10 ** digits) / 10 ** digits).toLocaleString('en');
const pct = (n: number) => `${(n * 100).toFixed(1)} %`;
const halfLife = (s: number) => (s % 86_400 === 0 ? `${s / 86_400} d` : s % 3600 === 0 ? `${s / 3600} h` : `${Math.round(s / 60)} min`);

/** Fair share over time: per team its entitlement, decayed usage, current share, and why the queue's next job is next. */
export default function FairnessPage() {
  const client = useClient();
  const q = useQuery(fairnessQuery(client));
  const f = q.data;
  return (
    <>
      <PageHeader
        title="Fairness"
        subtitle={
          f ? (
            <span data-testid="fairness-settings">
              Past GPU usage decays with a half-life of {halfLife(f.halfLifeSeconds)}; it weighs {pct(f.historyWeight)} against what teams hold now. The lowest
              weighted share goes next.
            </span>
          ) : (
            'How the queue is shared between teams over time'
          )
        }
      />
      {q.isError && !f ? (
        <ErrorPanel error={q.error} onRetry={() => void q.refetch()} title="Cannot load fair share" />
      ) : !f ? (
        <Loading />
      ) : (
        <>
          <section className="section">
            <h2 className="section-title">Teams</h2>
            {f.teams.length === 0 ? (
              <Empty>No team.</Empty>
            ) : (
              <table className="table" data-testid="fairness-teams">
                <thead>
                  <tr>
                    <th>Team</th>
                    <th>Entitlement</th>
                    <th className="num">GPUs held</th>
                    <th className="num">Decayed usage</th>
                    <th className="num">Counted GPUs</th>
                    <th className="num">Share</th>
                    <th className="num">Pending</th>
                  </tr>
                </thead>
                <tbody>
                  {f.teams.map((t) => (
                    <tr key={t.teamId} data-testid="fairness-team" data-team-id={t.teamId}>
                      <td>{t.teamName}</td>
                      <td className="small">
                        weight {num(t.weight, 3)}
                        {t.entitlement.map((e) => (
                          <span key={e.gpuModel} className="muted">
                            {' '}
                            · {e.gpuModel === '*' ? 'any model' : e.gpuModel}: {num(e.guaranteed)} guaranteed, limit {num(e.limit)}
                          </span>
                        ))}
                      </td>
                      <td className="num mono">{num(t.gpusHeld)}</td>
                      <td className="num mono" data-testid="fairness-decayed" title={`${num(t.decayedAverageGpus, 2)} GPUs on average`}>
                        {num(t.decayedGpuHours)} GPU-h
                      </td>
                      <td className="num mono">{num(t.fairShareGpus, 2)}</td>
                      <td className="num mono" data-testid="fairness-share">
                        {pct(t.share)}
                      </td>
                      <td className="num mono">{t.pending}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
          <section className="section">
            <h2 className="section-title">Next in the queue</h2>
            {f.queue.length === 0 ? (
              <Empty>Nothing is waiting.</Empty>
            ) : (
              <>
                <p className="card small" data-testid="fairness-why">
                  {f.why}
                </p>
                <ol className="small" data-testid="fairness-queue">
                  {f.queue.map((j) => (
                    <li key={j.position} data-testid="fairness-queue-item">
                      {j.jobId ? (
                        <Link href={`/jobs/${j.jobId}`} className="mono">
                          {j.jobName}
                        </Link>
                      ) : (
                        <span className="muted">a job</span>
                      )}{' '}
                      of {j.teamName} <span className="muted">({j.priority})</span>
                    </li>
                  ))}
                </ol>
              </>
            )}
          </section>
        </>
      )}
    </>
  );
}
