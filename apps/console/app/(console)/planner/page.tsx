'use client';

import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { PlannerRun } from '@gantry/contracts';
import { ConfirmDialog } from '@/components/modal';
import { PageHeader } from '@/components/page-header';
import { PlannerForm } from '@/components/planner/planner-form';
import { PlannerResults } from '@/components/planner/planner-results';
import '@/components/planner/planner.css';
import '@/components/utilization/utilization.css';
import { Empty, ErrorPanel, Loading } from '@/components/states';
import { describeError } from '@/lib/api';
import { formatTime } from '@/lib/format';
import { isLiveRun, plannerKeys, plannerRunQuery, plannerRunsQuery } from '@/lib/queries/planner';
import { useClient } from '@/lib/session';

/** The what-if planner: replay a workload on a cluster under several policies, compare, export. */
export default function PlannerPage() {
  const client = useClient();
  const runs = useQuery(plannerRunsQuery(client));
  const [selected, setSelected] = useState<string | null>(null);
  const shown = selected ?? runs.data?.items[0]?.id ?? null;

  return (
    <>
      <PageHeader title="Planner" subtitle="What if: replay a workload on a cluster under Gantry's policies and stock Kubernetes, side by side" />
      <PlannerForm onStarted={(run) => setSelected(run.id)} />
      {shown && <RunView id={shown} />}
      <section className="section" aria-labelledby="planner-runs-title">
        <h2 className="section-title" id="planner-runs-title">
          Recent runs
        </h2>
        {runs.isError ? (
          <ErrorPanel error={runs.error} onRetry={() => void runs.refetch()} title="Cannot load the runs" />
        ) : !runs.data ? (
          <Loading />
        ) : runs.data.items.length === 0 ? (
          <Empty>No run yet: choose a workload and a cluster above.</Empty>
        ) : (
          <div className="card table-card">
            <table className="table table-hover" data-testid="planner-runs">
              <thead>
                <tr>
                  <th scope="col">Started</th>
                  <th scope="col">Status</th>
                  <th scope="col">Policies</th>
                  <th scope="col" className="num">
                    Progress
                  </th>
                </tr>
              </thead>
              <tbody>
                {runs.data.items.map((r) => (
                  <tr key={r.id} data-testid="planner-run-row" data-status={r.status} className={r.id === shown ? 'planner-run-selected' : undefined}>
                    <td>
                      <button type="button" className="btn-link" onClick={() => setSelected(r.id)}>
                        {formatTime(r.createdAt)}
                      </button>
                    </td>
                    <td>{r.status}</td>
                    <td className="mono">{r.policies.join(', ')}</td>
                    <td className="num mono">{Math.round(r.progress * 100)} %</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}

/** One run: its progress while it runs (cancellable), its reason if it failed, its comparison once done. */
function RunView({ id }: { id: string }) {
  const client = useClient();
  const qc = useQueryClient();
  const run = useQuery(plannerRunQuery(client, id));
  const [asking, setAsking] = useState(false);
  const cancel = useMutation({
    mutationFn: () => client.planner.cancel(id),
    onSuccess: (r) => {
      qc.setQueryData(plannerKeys.run(id), r);
      void qc.invalidateQueries({ queryKey: plannerKeys.list() });
      setAsking(false);
    },
  });
  if (run.isError) return <ErrorPanel error={run.error} onRetry={() => void run.refetch()} title="Cannot load the run" />;
  if (!run.data) return <Loading />;
  const r: PlannerRun = run.data;
  const pct = Math.round(r.progress * 100);
  return (
    <section className="card pad section" data-testid="planner-run" data-status={r.status} aria-labelledby="planner-run-title">
      <div className="planner-run-head">
        <h2 className="card-title" id="planner-run-title">
          Run of {formatTime(r.createdAt)}: <span data-testid="planner-run-status">{r.status}</span>
        </h2>
        {isLiveRun(r) && (
          <>
            <div
              className="bar bar-lg planner-progress"
              role="progressbar"
              aria-label="Replay progress"
              aria-valuemin={0}
              aria-valuemax={100}
              aria-valuenow={pct}
              data-testid="planner-progress"
            >
              <span className="bar-seg bar-alloc" style={{ width: `${pct}%` }} />
            </div>
            <span className="mono small">{pct} %</span>
            <button type="button" className="btn btn-sm btn-danger-outline" data-testid="planner-cancel" onClick={() => setAsking(true)}>
              Cancel
            </button>
          </>
        )}
      </div>
      {r.error && r.status !== 'succeeded' && (
        <div className={`alert ${r.status === 'failed' ? 'alert-error' : 'alert-warn'}`} role="status" data-testid="planner-run-error">
          {r.error}
        </div>
      )}
      {r.status === 'succeeded' && r.result && <PlannerResults run={r} />}
      {asking && (
        <ConfirmDialog
          title="Cancel this run?"
          confirmLabel="Cancel the run"
          tone="danger"
          busy={cancel.isPending}
          error={cancel.error ? describeError(cancel.error) : null}
          onCancel={() => setAsking(false)}
          onConfirm={() => cancel.mutate()}
        >
          The replay stops where it is; nothing of it is kept.
        </ConfirmDialog>
      )}
    </section>
  );
}
