import type { GpuHealth, JobState, NodePowerState, NodeState } from '@gantry/contracts';

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

/** Power state of a node (power management): off is neutral, on its way is info. */
export const NODE_POWER_TONE: Record<NodePowerState, string> = {
  on: 'ok',
  'powering-down': 'info',
  off: 'neutral',
  'powering-up': 'info',
};

/** The node's power, shown only when it is not simply on. */
export function PowerPill({ power }: { power: NodePowerState }) {
  if (power === 'on') return null;
  return (
    <Pill tone={NODE_POWER_TONE[power]} testId="node-power">
      {power === 'off' ? 'powered off' : power}
    </Pill>
  );
}

export const GPU_HEALTH_TONE: Record<GpuHealth, string> = {
  healthy: 'ok',
  degraded: 'warn',
  unhealthy: 'bad',
};
