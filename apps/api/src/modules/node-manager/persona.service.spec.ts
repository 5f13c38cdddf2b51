import { PersonaService } from './persona.service';
import { FailoverService } from '../failover/failover.service';

/** Any method not listed resolves to `fallback` (the steps these tests do not look at). */
function fake<T = never>(methods: Partial<Record<string, (...a: never[]) => unknown>>, calls: string[], fallback: unknown = undefined): T {
  return new Proxy({} as object, {
    get: (_t, k: string) => async (...a: unknown[]) => {
      calls.push(`${k} ${a.filter((x) => typeof x === 'string' || typeof x === 'number' || Array.isArray(x)).map((x) => JSON.stringify(x)).join(' ')}`.trim());
      const m = methods[k] as ((...x: unknown[]) => unknown) | undefined;
      return m ? m(...a) : fallback;
    },
  }) as T;
}

describe('crash recovery in node operations', () => {
  it('a switch to vm-passthrough turns MIG off where the driver has a layout the database never recorded', async () => {
    const calls: string[] = [];
    const node = {
      id: 'n1',
      name: 'node-1',
      state: 'switching',
      persona: 'container',
      personaTarget: 'vm_passthrough',
      gpus: [
        { id: 'g0', index: 0, mode: 'whole', migTarget: [{ profile: '3g.40gb', start: 0 }] }, // killed after mig.applied
        { id: 'g1', index: 1, mode: 'whole', migTarget: null },
        { id: 'g2', index: 2, mode: 'mig', migTarget: null },
      ],
    };
    const repo = fake({ findNode: () => node, setNodeState: () => true, activeJobsOn: () => [], countActiveAllocationsOnNode: () => 0, commitMigLayout: () => true }, calls);
    const driver = fake(
      { discover: () => ({ nodes: [{ name: 'node-1', gpus: [{ migLayout: [{ profile: '3g.40gb', start: 0 }] }, { migLayout: [] }, { migLayout: [{ profile: '7g.80gb', start: 0 }] }] }] }) },
      calls,
    );
    const svc = new PersonaService(repo, fake({}, calls), fake({ move: () => [] }, calls), driver, { driver: { simSpeed: 1 } } as never);
    await svc.handle({ action: 'switch', nodeId: 'n1', persona: 'vm-passthrough' });
    const mig = calls.filter((c) => c.startsWith('applyMigLayout') || c.startsWith('commitMigLayout'));
    expect(mig).toEqual(['applyMigLayout "node-1" 0 []', 'commitMigLayout "g0" []', 'applyMigLayout "node-1" 2 []', 'commitMigLayout "g2" []']);
    expect(calls.indexOf('setPersona "node-1" "vm-passthrough"')).toBeGreaterThan(calls.indexOf('commitMigLayout "g2" []'));
  });

  it('a GPU reset moves the jobs a killed fault step left on the quarantined GPU instead of waiting forever', async () => {
    const calls: string[] = [];
    const node = { id: 'n1', name: 'node-1', state: 'ready', stateReason: null, gpus: [{ id: 'g0', index: 0 }] };
    let left = [{ id: 'j1', tenantId: 't', state: 'running', kind: 'batch', progressSeconds: 0, runningSince: null, checkpoint: null, nodeIds: ['n1'] }];
    let reset = false;
    const repo = fake(
      {
        findIncident: () => ({ id: 'i1', kind: 'xid', remediation: 'reset-gpu', attempts: 0, nodeId: 'n1', gpuId: 'g0', jobIds: [], mitigatedAt: null, state: 'open', resolvedAt: null }),
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
        discover: () => ({ nodes: [{ name: 'node-1', ready: true, gpus: [{ health: reset ? 'healthy' : 'unhealthy' }] }] }),
        resetGpu: () => void (reset = true),
      },
      calls,
    );
    const svc = new FailoverService(repo, fake({}, calls), mover, driver, fake({}, calls));
    await svc.handle({ action: 'remediate', incidentId: 'i1' });
    const moved = calls.findIndex((c) => c.startsWith('move'));
    expect(moved).toBeGreaterThanOrEqual(0);
    expect(moved).toBeLessThan(calls.indexOf('resetGpu "node-1" 0'));
    expect(calls.some((c) => c.startsWith('resolveIncident "i1"'))).toBe(true);
  });
});
