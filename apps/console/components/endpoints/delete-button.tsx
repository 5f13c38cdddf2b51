'use client';

import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Endpoint } from '@gantry/contracts';
import { describeError } from '@/lib/api';
import { deleteEndpoint, endpointKeys } from '@/lib/queries/endpoints';
import { useClient } from '@/lib/session';

/** Delete, confirmed inline: the replicas stop and their GPUs are released. */
export function EndpointDelete({ endpoint, onDeleted }: { endpoint: Pick<Endpoint, 'id' | 'name'>; onDeleted: () => void }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const remove = useMutation({
    mutationFn: () => deleteEndpoint(client, endpoint.id),
    onSuccess: () => {
      queryClient.removeQueries({ queryKey: endpointKeys.detail(endpoint.id) });
      void queryClient.invalidateQueries({ queryKey: endpointKeys.all });
      onDeleted();
    },
  });
  if (!confirming) {
    return (
      <button type="button" className="btn btn-danger-outline" data-testid="endpoint-delete" onClick={() => setConfirming(true)}>
        Delete
      </button>
    );
  }
  return (
    <span className="cancel-wrap" data-testid="endpoint-delete-confirm">
      <span className="confirm-text">Delete {endpoint.name}? Its replicas stop and release their GPUs.</span>
      <button type="button" className="btn btn-danger-outline" data-testid="endpoint-delete-yes" disabled={remove.isPending} onClick={() => remove.mutate()}>
        {remove.isPending ? 'Deleting…' : 'Delete'}
      </button>
      <button type="button" className="btn btn-ghost" onClick={() => setConfirming(false)}>
        Keep
      </button>
      {remove.isError && (
        <span className="inline-error" role="alert" data-testid="endpoint-delete-error">
          {describeError(remove.error)}
        </span>
      )}
    </span>
  );
}
