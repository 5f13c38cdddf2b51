'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Job } from '@gantry/contracts';
import { describeError } from '@/lib/api';
import { cancelJob, jobKeys } from '@/lib/queries/jobs';
import { useClient } from '@/lib/session';

/** Cancels an active job; the list and the detail refresh right after. */
export function CancelButton({ job, size = 'sm' }: { job: Pick<Job, 'id' | 'name' | 'state'>; size?: 'sm' | 'md' }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const cancel = useMutation({
    mutationFn: () => cancelJob(client, job.id),
    onSettled: () => queryClient.invalidateQueries({ queryKey: jobKeys.all }),
  });
  return (
    <span className="cancel-wrap">
      <button
        type="button"
        className={`btn btn-danger-outline${size === 'sm' ? ' btn-sm' : ''}`}
        data-testid="job-cancel"
        disabled={cancel.isPending || job.state === 'cancelled'}
        onClick={(e) => {
          e.stopPropagation();
          cancel.mutate();
        }}
        title={`Cancel ${job.name}`}
      >
        {cancel.isPending ? 'Cancelling…' : 'Cancel'}
      </button>
      {cancel.isError && (
        <span className="inline-error" data-testid="job-cancel-error" title={describeError(cancel.error)}>
          {describeError(cancel.error)}
        </span>
      )}
    </span>
  );
}
