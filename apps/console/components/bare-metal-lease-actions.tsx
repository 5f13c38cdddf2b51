'use client';

import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { BareMetalLease } from '@gantry/contracts';
import { describeError } from '@/lib/api';
import { bareMetalKeys, leaseAction, type LeaseAction } from '@/lib/queries/bare-metal';
import { useClient } from '@/lib/session';

const LABEL: Record<LeaseAction, { verb: string; confirm: string; className: string }> = {
  suspend: { verb: 'Suspend', confirm: 'Power the nodes off? They stay yours, disks kept.', className: 'btn-outline' },
  resume: { verb: 'Resume', confirm: 'Power the nodes on?', className: 'btn-primary' },
  release: { verb: 'Release', confirm: 'Wipe the disks and give the nodes back?', className: 'btn-danger-outline' },
};

/** The actions a lease's state allows. */
export function leaseActionsFor(state: BareMetalLease['state']): LeaseAction[] {
  const out: LeaseAction[] = [];
  if (state === 'deployed') out.push('suspend');
  if (state === 'suspended') out.push('resume');
  if (state !== 'releasing' && state !== 'released') out.push('release');
  return out;
}

/** Suspend, resume and release of one lease, each confirmed inline. */
export function BareMetalLeaseActions({ lease }: { lease: Pick<BareMetalLease, 'id' | 'name' | 'state'> }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState<LeaseAction | null>(null);
  const run = useMutation({
    mutationFn: (a: LeaseAction) => leaseAction(client, lease.id, a),
    onSettled: () => queryClient.invalidateQueries({ queryKey: bareMetalKeys.all }),
  });
  if (confirming) {
    const l = LABEL[confirming];
    return (
      <span className="cancel-wrap" data-testid="bm-action-confirm">
        <span className="confirm-text">{l.confirm}</span>
        <button
          type="button"
          className={`btn ${l.className} btn-sm`}
          data-testid={`bm-${confirming}-confirm`}
          onClick={() => {
            run.mutate(confirming);
            setConfirming(null);
          }}
        >
          {l.verb}
        </button>
        <button type="button" className="btn btn-ghost btn-sm" onClick={() => setConfirming(null)}>
          Keep
        </button>
      </span>
    );
  }
  return (
    <span className="cancel-wrap">
      {leaseActionsFor(lease.state).map((a) => (
        <button
          key={a}
          type="button"
          className={`btn ${LABEL[a].className} btn-sm`}
          data-testid={`bm-${a}`}
          disabled={run.isPending}
          onClick={() => setConfirming(a)}
          title={`${LABEL[a].verb} ${lease.name}`}
        >
          {LABEL[a].verb}
        </button>
      ))}
      {run.isError && (
        <span className="field-error" role="alert">
          {describeError(run.error)}
        </span>
      )}
    </span>
  );
}
