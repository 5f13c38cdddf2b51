import type { JobDetail, JobState } from '@gantry/contracts';
import { formatDuration, formatTime } from '@/lib/format';

/** The state a job enters with each of its events (events that change no state are left out). */
const ENTERS: Record<string, JobState> = {
  'job.submitted': 'pending',
  'job.placed': 'starting',
  'job.running': 'running',
  'job.suspending': 'suspending',
  'job.suspended': 'suspended',
  'job.resumed': 'pending',
  'job.preempted': 'pending',
  'job.requeued': 'pending',
  'job.rescheduled': 'pending',
  'job.succeeded': 'succeeded',
  'job.failed': 'failed',
  'job.cancelled': 'cancelled',
};

export interface StateStep {
  state: JobState;
  at: string;
  /** Time spent in the state, up to the next step (or `now` for the last step of an active job). */
  ms: number | null;
}

/** The states a job went through, from its events: a `starting` that lasted 300 ms still shows. */
export function statePath(job: Pick<JobDetail, 'events' | 'state'>, now: number): StateStep[] {
  const steps: { state: JobState; at: string }[] = [];
  for (const e of [...job.events].sort((a, b) => a.createdAt.localeCompare(b.createdAt))) {
    const state = ENTERS[e.type];
    if (!state || steps[steps.length - 1]?.state === state) continue;
    steps.push({ state, at: e.createdAt });
  }
  const terminal = job.state === 'succeeded' || job.state === 'failed' || job.state === 'cancelled';
  return steps.map((s, i) => {
    const next = steps[i + 1];
    const end = next ? Date.parse(next.at) : terminal ? null : now;
    return { ...s, ms: end === null ? null : Math.max(0, end - Date.parse(s.at)) };
  });
}

/** "pending 12s → starting 0.4s → running 1m 3s" */
export function StatePath({ job, now }: { job: Pick<JobDetail, 'events' | 'state'>; now: number }) {
  const steps = statePath(job, now);
  if (steps.length < 2) return null;
  return (
    <ol className="state-path" data-testid="job-state-path" aria-label="States the job went through">
      {steps.map((s, i) => (
        <li key={`${s.state}-${i}`} className={`state-step state-text-${s.state}`} data-state={s.state} title={`since ${formatTime(s.at)}`}>
          <span className="state-step-name">{s.state}</span>
          {s.ms !== null && <span className="state-step-time">{s.ms < 1000 ? `${(s.ms / 1000).toFixed(1)}s` : formatDuration(s.ms)}</span>}
        </li>
      ))}
    </ol>
  );
}
