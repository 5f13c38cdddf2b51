'use client';

import { useEffect, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { LiveEvent } from '@gantry/sdk';
import type { GantryClient } from './api';

/** Query keys each live topic makes stale. */
const STALE: Record<LiveEvent['topic'], string[][]> = {
  job: [['jobs'], ['utilization'], ['endpoints']],
  node: [['nodes'], ['gpus'], ['topology'], ['utilization']],
  incident: [['incidents'], ['nodes']],
  other: [],
};
const THROTTLE_MS = 500;
const RETRY_MS = 3000;

/**
 * Follows `/v1/events/stream` while signed in and refreshes the views a live event touches
 * (jobs, nodes, incidents), so pages update without waiting for their poll.
 */
export function LiveUpdates({ client }: { client: GantryClient }) {
  const qc = useQueryClient();
  const [state, setState] = useState<'connecting' | 'live' | 'offline'>('connecting');

  useEffect(() => {
    const ctrl = new AbortController();
    const pending = new Map<string, string[]>();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const flush = () => {
      timer = undefined;
      for (const key of pending.values()) void qc.invalidateQueries({ queryKey: key });
      pending.clear();
    };
    const onEvent = (e: LiveEvent) => {
      for (const key of STALE[e.topic] ?? []) pending.set(key.join('/'), key);
      timer ??= setTimeout(flush, THROTTLE_MS);
    };
    const run = async () => {
      while (!ctrl.signal.aborted) {
        try {
          await client.events.stream(onEvent, { signal: ctrl.signal, onOpen: () => setState('live') });
        } catch {
          /* reconnect below */
        }
        if (ctrl.signal.aborted) return;
        setState('offline');
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    };
    void run();
    return () => {
      ctrl.abort();
      if (timer) clearTimeout(timer);
    };
  }, [client, qc]);

  return <span data-testid="live-status" data-state={state} title={`live updates: ${state}`} hidden />;
}
