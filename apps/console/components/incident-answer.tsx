'use client';

import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Incident } from '@gantry/contracts';
import { describeError } from '@/lib/api';
import { incidentKeys } from '@/lib/queries/incidents';
import { useClient } from '@/lib/session';
import { ConfirmDialog } from './modal';

/**
 * An operator's answer to hardware that failed burn-in (incident `needs-attention`): run the
 * burn-in again (after replacing the part), or release the hardware into service without a pass.
 */
export function IncidentAnswer({ incident: i }: { incident: Incident }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const [asking, setAsking] = useState(false);
  const answer = useMutation({
    mutationFn: (a: 'burn-in' | 'release') => (a === 'burn-in' ? client.incidents.retryBurnIn(i.id) : client.incidents.release(i.id)),
    onSettled: () => queryClient.invalidateQueries({ queryKey: incidentKeys.all }),
  });
  const target = `${i.nodeName ?? i.nodeId ?? 'the node'}${i.gpuIndex !== null ? ` GPU ${i.gpuIndex}` : ''}`;
  return (
    <div className="incident-answer" data-testid="incident-answer">
      <span className="small">
        {target} failed burn-in {i.burnInFailures} time(s) and stays quarantined. Replace the part, then:
      </span>
      <button
        type="button"
        className="btn btn-sm btn-primary"
        data-testid="incident-retry-burn-in"
        disabled={answer.isPending}
        onClick={() => answer.mutate('burn-in')}
      >
        {answer.isPending && answer.variables === 'burn-in' ? 'Starting…' : 'Retry burn-in'}
      </button>
      <button
        type="button"
        className="btn btn-sm btn-danger-outline"
        data-testid="incident-release"
        disabled={answer.isPending}
        onClick={() => setAsking(true)}
      >
        Release
      </button>
      {answer.isError && (
        <span className="error small" role="alert">
          {describeError(answer.error)}
        </span>
      )}
      {asking && (
        <ConfirmDialog
          title={`Release ${target}?`}
          confirmLabel="Release"
          tone="danger"
          onCancel={() => setAsking(false)}
          onConfirm={() => {
            answer.mutate('release');
            setAsking(false);
          }}
        >
          {target} goes back into service without a passing burn-in: tenants&apos; jobs will be placed on it. Its last burn-in failed.
        </ConfirmDialog>
      )}
    </div>
  );
}
