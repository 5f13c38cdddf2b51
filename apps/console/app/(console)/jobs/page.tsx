'use client';

import { Suspense, useState } from 'react';
import Link from 'next/link';
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { useQuery } from '@tanstack/react-query';
import type { Job, JobState } from '@gantry/contracts';
import { PageHeader } from '@/components/page-header';
import { Empty, ErrorPanel, Loading } from '@/components/states';
import { JobsTable } from '@/components/jobs-table';
import { JobSubmitDialog } from '@/components/job-submit-form';
import { isActive, STATE_ORDER } from '@/lib/format';
import { jobsListQuery } from '@/lib/queries/jobs';
import { useClient } from '@/lib/session';
import { useTeam } from '@/lib/team';

type StateFilter = '' | 'active' | JobState;

export default function JobsPage() {
  return (
    <Suspense fallback={<Loading />}>
      <Jobs />
    </Suspense>
  );
}

function Jobs() {
  const client = useClient();
  const { teamId, team, teams } = useTeam();
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const stateFilter = (params.get('state') ?? '') as StateFilter;
  const [submitOpen, setSubmitOpen] = useState(false);
  const [submitted, setSubmitted] = useState<Job | null>(null);

  const jobs = useQuery(jobsListQuery(client, teamId || undefined));

  const setStateFilter = (s: StateFilter) => router.replace(s ? `${pathname}?state=${s}` : pathname, { scroll: false });

  const all = jobs.data ?? [];
  const shown = all
    .filter((j) => (stateFilter === '' ? true : stateFilter === 'active' ? isActive(j.state) : j.state === stateFilter))
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  const activeCount = all.filter((j) => isActive(j.state)).length;
  const pendingCount = all.filter((j) => j.state === 'pending').length;

  return (
    <>
      <PageHeader
        title="Jobs"
        subtitle={
          <>
            {team ? team.name : 'All teams'} · {all.length} jobs · {activeCount} active · {pendingCount} pending
            <span className="live-dot" title="Refreshed every 2 seconds" />
          </>
        }
        actions={
          <>
            <select
              className="select-sm"
              data-testid="jobs-state-filter"
              value={stateFilter}
              onChange={(e) => setStateFilter(e.target.value as StateFilter)}
              aria-label="Filter by state"
            >
              <option value="">All states</option>
              <option value="active">Active</option>
              {STATE_ORDER.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
            <button type="button" className="btn btn-primary" data-testid="job-submit-open" onClick={() => setSubmitOpen(true)}>
              + Submit job
            </button>
          </>
        }
      />
      {submitted && (
        <div className="alert alert-ok flash" data-testid="submit-success">
          Submitted <Link href={`/jobs/${submitted.id}`}>{submitted.name}</Link> ({submitted.state}).
          <button type="button" className="btn-close" aria-label="Dismiss" onClick={() => setSubmitted(null)}>
            ×
          </button>
        </div>
      )}
      {jobs.isError && !jobs.data ? (
        <ErrorPanel error={jobs.error} onRetry={() => void jobs.refetch()} title="Cannot load jobs" />
      ) : !jobs.data ? (
        <Loading />
      ) : shown.length === 0 ? (
        <Empty>
          {all.length === 0 ? (
            <>
              No jobs yet.{' '}
              <button type="button" className="btn-link" onClick={() => setSubmitOpen(true)}>
                Submit one
              </button>
              .
            </>
          ) : (
            'No job in this state.'
          )}
        </Empty>
      ) : (
        <>
          {jobs.isError && <ErrorPanel error={jobs.error} title="Refresh failed, showing the last answer" />}
          <JobsTable jobs={shown} showTeam={!teamId && teams.length > 1} />
        </>
      )}
      {submitOpen && (
        <JobSubmitDialog
          onClose={() => setSubmitOpen(false)}
          onSubmitted={(job) => {
            setSubmitOpen(false);
            setSubmitted(job);
          }}
        />
      )}
    </>
  );
}
