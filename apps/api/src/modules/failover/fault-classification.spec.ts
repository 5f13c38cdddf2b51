import { classifyNicDown, classifyNodeDown, classifyXid, isFailoverExit } from './fault-classification';

describe('fault classification (docs/reference/gpu.md section 3)', () => {
  it.each([
    { name: 'Xid 13 (graphics engine exception) restarts the job only', xid: 13, wantScope: 'none', wantHealth: 'healthy', wantRemediation: 'restart-job' },
    { name: 'Xid 31 (MMU fault) is the application', xid: 31, wantScope: 'none', wantHealth: 'healthy', wantRemediation: 'restart-job' },
    { name: 'Xid 43 is the application', xid: 43, wantScope: 'none', wantHealth: 'healthy', wantRemediation: 'restart-job' },
    { name: 'Xid 45 (preemptive cleanup) is the application', xid: 45, wantScope: 'none', wantHealth: 'healthy', wantRemediation: 'restart-job' },
    { name: 'Xid 68 is the application', xid: 68, wantScope: 'none', wantHealth: 'healthy', wantRemediation: 'restart-job' },
    { name: 'Xid 109 is the application', xid: 109, wantScope: 'none', wantHealth: 'healthy', wantRemediation: 'restart-job' },
    { name: 'Xid 48 (double-bit ECC) quarantines the GPU', xid: 48, wantScope: 'gpu', wantHealth: 'unhealthy', wantRemediation: 'reset-gpu' },
    { name: 'Xid 63 (row remap pending) degrades the GPU', xid: 63, wantScope: 'gpu', wantHealth: 'degraded', wantRemediation: 'reset-gpu' },
    { name: 'Xid 64 (row remap failure) quarantines the GPU', xid: 64, wantScope: 'gpu', wantHealth: 'unhealthy', wantRemediation: 'reset-gpu' },
    { name: 'Xid 74 (NVLink) quarantines the GPU', xid: 74, wantScope: 'gpu', wantHealth: 'unhealthy', wantRemediation: 'reset-gpu' },
    {
      name: 'Xid 79 (fallen off the bus) quarantines the GPU and escalates to a reboot',
      xid: 79,
      wantScope: 'gpu',
      wantHealth: 'unhealthy',
      wantRemediation: 'reset-gpu',
      wantEscalation: 'reboot-node',
    },
    { name: 'Xid 92 (high single-bit ECC rate) degrades the GPU', xid: 92, wantScope: 'gpu', wantHealth: 'degraded', wantRemediation: 'reset-gpu' },
    { name: 'Xid 94 (contained ECC) degrades the GPU', xid: 94, wantScope: 'gpu', wantHealth: 'degraded', wantRemediation: 'reset-gpu' },
    { name: 'Xid 95 (uncontained ECC) quarantines the GPU', xid: 95, wantScope: 'gpu', wantHealth: 'unhealthy', wantRemediation: 'reset-gpu' },
    { name: 'Xid 119 (GSP RPC timeout) quarantines the GPU', xid: 119, wantScope: 'gpu', wantHealth: 'unhealthy', wantRemediation: 'reset-gpu' },
    { name: 'Xid 120 (GSP error) quarantines the GPU', xid: 120, wantScope: 'gpu', wantHealth: 'unhealthy', wantRemediation: 'reset-gpu' },
    { name: 'an unknown Xid is treated as critical', xid: 999, wantScope: 'gpu', wantHealth: 'unhealthy', wantRemediation: 'reset-gpu' },
  ])('$name', ({ xid, wantScope, wantHealth, wantRemediation, wantEscalation }) => {
    const c = classifyXid(xid);
    expect(c.scope).toBe(wantScope);
    expect(c.gpuHealth).toBe(wantHealth);
    expect(c.remediation).toBe(wantRemediation);
    if (wantEscalation) expect(c.escalation).toBe(wantEscalation);
    expect(c.moves).toBe('gpu-jobs');
  });

  it('degrading Xids checkpoint the jobs that still run; fatal ones reschedule jobs that are gone', () => {
    expect(classifyXid(94).checkpoint).toBe(true);
    expect(classifyXid(79).checkpoint).toBe(false);
  });

  it('a node down moves every job of the node and reboots it', () => {
    expect(classifyNodeDown('heartbeat')).toMatchObject({ scope: 'node', moves: 'node-jobs', remediation: 'reboot-node', severity: 'critical' });
    expect(classifyNodeDown('heartbeat').summary).toMatch(/heartbeat/);
  });

  it('a NIC down cordons the node for multi-node work only', () => {
    expect(classifyNicDown()).toMatchObject({ scope: 'node', moves: 'multi-node-jobs', remediation: 'wait-nic' });
  });

  it.each([
    { reason: 'node-lost', want: true },
    { reason: 'gpu-fault', want: true },
    { reason: 'evicted', want: true },
    { reason: 'failed', want: false },
    { reason: 'completed', want: false },
    { reason: undefined, want: false },
  ])('exit reason $reason belongs to failover: $want', ({ reason, want }) => {
    expect(isFailoverExit(reason)).toBe(want);
  });
});
