import { FailoverService } from './failover.service';
import { fake } from '../../test-support/fake';

describe('crash recovery in node operations', () => {
  it('a GPU reset moves the jobs a killed fault step left on the quarantined GPU instead of waiting forever', async () => {
    const calls: string[] = [];
    const node = { id: 'n1', name: 'node-1', state: 'ready', stateReason: null, gpus: [{ id: 'g0', index: 0 }] };
    let left = [{ id: 'j1', tenantId: 't', state: 'running', kind: 'batch', progressSeconds: 0, runningSince: null, checkpoint: null, nodeIds: ['n1'] }];
    let reset = false;
    const repo = fake(
      {
        findIncident: () => ({
          id: 'i1',
          kind: 'xid',
          remediation: 'reset-gpu',
          attempts: 0,
          nodeId: 'n1',
          gpuId: 'g0',
          jobIds: [],
          mitigatedAt: null,
          state: 'open',
          resolvedAt: null,
        }),
        findNode: () => node,
        activeJobsOn: () => left,
        openIncidentsOn: () => [],
        jobsBackAt: () => null,
      },
      calls,
    );
    const mover = fake({ move: (jobs: never[]) => ((left = []), jobs) }, calls);
    const driver = fake(
      {
        discoverNode: (name: string) => (name === 'node-1' ? { name, ready: true, gpus: [{ health: reset ? 'healthy' : 'unhealthy' }] } : undefined),
        resetGpu: () => void (reset = true),
      },
      calls,
    );
    const svc = new FailoverService(repo, repo, repo, fake({}, calls), mover, driver, fake({}, calls), fake({ required: () => false }, calls));
    await svc.handle({ action: 'remediate', incidentId: 'i1' });
    const moved = calls.findIndex((c) => c.startsWith('move'));
    expect(moved).toBeGreaterThanOrEqual(0);
    expect(moved).toBeLessThan(calls.indexOf('resetGpu "node-1" 0'));
    expect(calls.some((c) => c.startsWith('resolveIncident "i1"'))).toBe(true);
  });
});
