import { progressOf } from './jobs.presenter';

const now = new Date('2026-12-01T10:00:00Z');
const since = new Date('2026-12-01T09:59:30Z'); // 30 s ago

describe('progressOf', () => {
  it.each([
    { name: 'running: stored progress plus the current run', state: 'running', runningSince: since, progressSeconds: 0, wantProgress: 0.3 },
    {
      name: 'suspending: the run goes on until the checkpoint (no flash to 0)',
      state: 'suspending',
      runningSince: since,
      progressSeconds: 0,
      wantProgress: 0.3,
    },
    { name: 'suspended: the checkpointed progress', state: 'suspended', runningSince: null, progressSeconds: 30, wantProgress: 0.3 },
    { name: 'pending after a resume: the kept progress', state: 'pending', runningSince: null, progressSeconds: 30, wantProgress: 0.3 },
    { name: 'starting: nothing runs yet', state: 'starting', runningSince: null, progressSeconds: 0, wantProgress: 0 },
    { name: 'succeeded: done', state: 'succeeded', runningSince: null, progressSeconds: 10, wantProgress: 1 },
  ] as const)('$name', ({ state, runningSince, progressSeconds, wantProgress }) => {
    expect(progressOf({ durationSeconds: 100, state, runningSince, progressSeconds }, now, 1)).toBeCloseTo(wantProgress, 5);
  });

  it('has no progress without a simulated duration', () => {
    expect(progressOf({ durationSeconds: null, state: 'running', runningSince: since, progressSeconds: 0 }, now, 1)).toBeUndefined();
  });
});
