import { burnInGpus, burnInJobId, burnInPollMs, burnInVerdict, incidentOfBurnIn, needsBurnIn, nextAfterBurnIn } from './burn-in';

describe('burn-in rules (the last gate of the failover loop)', () => {
  it('is needed only after a reset or reboot of a quarantined GPU or node, and only when enabled', () => {
    expect(needsBurnIn(true, { scope: 'gpu', remediation: 'reset-gpu', attempts: 1 })).toBe(true);
    expect(needsBurnIn(true, { scope: 'node', remediation: 'reboot-node', attempts: 2 })).toBe(true);
    // the hardware came back by itself (no repair): the idle check is the only check, as before
    expect(needsBurnIn(true, { scope: 'gpu', remediation: 'reset-gpu', attempts: 0 })).toBe(false);
    // a NIC that came back, an application fault: nothing was repaired
    expect(needsBurnIn(true, { scope: 'node', remediation: 'wait-nic', attempts: 1 })).toBe(false);
    expect(needsBurnIn(true, { scope: 'none', remediation: 'restart-job', attempts: 1 })).toBe(false);
    expect(needsBurnIn(false, { scope: 'gpu', remediation: 'reset-gpu', attempts: 1 })).toBe(false);
  });

  it('loads the quarantined GPU of a GPU incident and every GPU of a node incident', () => {
    expect(burnInGpus('gpu', 8, 3)).toEqual([3]);
    expect(burnInGpus('node', 4, undefined)).toEqual([0, 1, 2, 3]);
    expect(burnInGpus('node', 2, 1)).toEqual([0, 1]); // a GPU fault escalated to a reboot: the whole node
  });

  it.each([
    { status: { state: 'running' as const, progressSeconds: 10 }, want: 'running' },
    { status: { state: 'exited' as const, progressSeconds: 300, exitCode: 0, reason: 'completed' as const }, want: 'passed' },
    { status: { state: 'exited' as const, progressSeconds: 120, exitCode: 1, reason: 'failed' as const }, want: 'failed' },
    { status: { state: 'exited' as const, progressSeconds: 50, exitCode: 1, reason: 'gpu-fault' as const }, want: 'failed' },
    { status: { state: 'exited' as const, progressSeconds: 50, exitCode: 137, reason: 'node-lost' as const }, want: 'lost' },
    { status: { state: 'exited' as const, progressSeconds: 50, exitCode: 143, reason: 'evicted' as const }, want: 'lost' },
    { status: { state: 'unknown' as const, progressSeconds: 0 }, want: 'lost' },
  ])('reads $status.state/$status.reason as $want', ({ status, want }) => {
    expect(burnInVerdict(status)).toBe(want);
  });

  it('two failures leave the hardware for a person; one is repaired again; a pass returns it; a lost run does not count', () => {
    expect(nextAfterBurnIn('running', 0, 2)).toEqual({ next: 'wait', failures: 0 });
    expect(nextAfterBurnIn('passed', 1, 2)).toEqual({ next: 'return-to-service', failures: 1 });
    expect(nextAfterBurnIn('failed', 0, 2)).toEqual({ next: 'repair-and-retry', failures: 1 });
    expect(nextAfterBurnIn('failed', 1, 2)).toEqual({ next: 'needs-attention', failures: 2 });
    expect(nextAfterBurnIn('lost', 1, 2)).toEqual({ next: 'start-again', failures: 1 });
    expect(nextAfterBurnIn('failed', 0, 1)).toEqual({ next: 'needs-attention', failures: 1 });
  });

  it('names its workload after the incident, as a valid Kubernetes label value', () => {
    const id = burnInJobId('cmabc123xyz0000abcdefghij', 1764662400000);
    expect(id).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    expect(id.length).toBeLessThanOrEqual(63);
    expect(incidentOfBurnIn(id)).toBe('cmabc123xyz0000abcdefghij');
    expect(incidentOfBurnIn('cmjob123')).toBeUndefined();
  });

  it('looks at a running burn-in about ten times over its length, within 0.2 s .. 5 s', () => {
    expect(burnInPollMs(300, 50)).toBe(600);
    expect(burnInPollMs(300, 1)).toBe(5000);
    expect(burnInPollMs(1, 1000)).toBe(200);
  });
});
