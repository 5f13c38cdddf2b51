'use client';

import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Job } from '@gantry/contracts';
import { describeError } from '@/lib/api';
import { cancelJob, jobKeys, resumeJob, suspendJob } from '@/lib/queries/jobs';
import { useClient } from '@/lib/session';
import { isActive } from '@/lib/format';

type Action = 'suspend' | 'resume' | 'cancel';

const SUSPENDABLE_KINDS: readonly string[] = ['training', 'notebook', 'vm', 'cluster'];

const LABEL: Record<Action, { verb: string; doing: string; confirm: string; className: string }> = {
  suspend: { verb: 'Suspend', doing: 'Suspending…', confirm: 'Checkpoint it and free its GPUs?', className: 'btn-outline' },
  resume: { verb: 'Resume', doing: 'Resuming…', confirm: 'Queue it again from its checkpoint?', className: 'btn-primary' },
  cancel: { verb: 'Cancel', doing: 'Cancelling…', confirm: 'Stop it for good?', className: 'btn-danger-outline' },
};

/** The actions a job's state allows right now. */
export function actionsFor(job: Pick<Job, 'kind' | 'state'>): Action[] {
  const out: Action[] = [];
  if (SUSPENDABLE_KINDS.includes(job.kind) && ['pending', 'starting', 'running'].includes(job.state)) out.push('suspend');
  if (job.state === 'suspended') out.push('resume');
  if (isActive(job.state)) out.push('cancel');
  return out;
}

/** One-click suspend, resume and cancel, each confirmed inline; the lists refresh right after. */
export function JobActions({ job, size = 'sm' }: { job: Pick<Job, 'id' | 'name' | 'state' | 'kind'>; size?: 'sm' | 'md' }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState<Action | null>(null);
  const run = useMutation({
    mutationFn: (action: Action) =>
      action === 'suspend' ? suspendJob(client, job.id) : action === 'resume' ? resumeJob(client, job.id) : cancelJob(client, job.id),
    onSettled: () => queryClient.invalidateQueries({ queryKey: jobKeys.all }),
  });
  const sm = size === 'sm' ? ' btn-sm' : '';
  const stop = (e: React.MouseEvent) => e.stopPropagation();

  if (confirming) {
    const l = LABEL[confirming];
    return (
      <span className="cancel-wrap" onClick={stop} data-testid="job-action-confirm" data-action={confirming}>
        <span className="confirm-text">{l.confirm}</span>
        <button
          type="button"
          className={`btn ${l.className}${sm}`}
          data-testid={`job-${confirming}-confirm`}
          onClick={() => {
            run.mutate(confirming);
            setConfirming(null);
          }}
        >
          {l.verb}
        </button>
        <button type="button" className={`btn btn-ghost${sm}`} data-testid="job-action-dismiss" onClick={() => setConfirming(null)}>
          Keep
        </button>
      </span>
    );
  }
  return (
    <span className="cancel-wrap" onClick={stop}>
      {actionsFor(job).map((a) => (
        <button
          key={a}
          type="button"
          className={`btn ${LABEL[a].className}${sm}`}
          data-testid={`job-${a}`}
          disabled={run.isPending}
          onClick={() => setConfirming(a)}
          title={`${LABEL[a].verb} ${job.name}`}
        >
          {run.isPending && run.variables === a ? LABEL[a].doing : LABEL[a].verb}
        </button>
      ))}
      {run.isError && (
        <span className="inline-error" data-testid="job-action-error" title={describeError(run.error)}>
          {describeError(run.error)}
        </span>
      )}
    </span>
  );
}
