import type { GpuHealth, JobState, NodeState } from '@gantry/contracts';

/** Coloured badge of a job state; the colour comes from the `state-<name>` class. */
export function StateBadge({ state }: { state: JobState }) {
  return (
    <span className={`badge state-${state}`} data-testid="job-state" data-state={state}>
      {state}
    </span>
  );
}

export function Pill({ tone, children, testId }: { tone: string; children: React.ReactNode; testId?: string }) {
  return (
    <span className={`pill pill-${tone}`} data-testid={testId}>
      {children}
    </span>
  );
}

export const NODE_STATE_TONE: Record<NodeState, string> = {
  ready: 'ok',
  cordoned: 'warn',
  draining: 'warn',
  switching: 'info',
  down: 'bad',
};

export const GPU_HEALTH_TONE: Record<GpuHealth, string> = {
  healthy: 'ok',
  degraded: 'warn',
  unhealthy: 'bad',
};
