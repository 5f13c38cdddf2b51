import { PersonaService } from './persona.service';
import { fake } from '../../test-support/fake';

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
    const repo = fake(
      { findNode: () => node, setNodeState: () => true, activeJobsOn: () => [], countActiveAllocationsOnNode: () => 0, commitMigLayout: () => true },
      calls,
    );
    const driver = fake(
      {
        discoverNode: (name: string) =>
          name === 'node-1'
            ? { name, gpus: [{ migLayout: [{ profile: '3g.40gb', start: 0 }] }, { migLayout: [] }, { migLayout: [{ profile: '7g.80gb', start: 0 }] }] }
            : undefined,
      },
      calls,
    );
    const svc = new PersonaService(repo, repo, repo, fake({}, calls), fake({ move: () => [] }, calls), driver, { driver: { simSpeed: 1 } } as never);
    await svc.handle({ action: 'switch', nodeId: 'n1', persona: 'vm-passthrough' });
    const mig = calls.filter((c) => c.startsWith('applyMigLayout') || c.startsWith('commitMigLayout'));
    expect(mig).toEqual(['applyMigLayout "node-1" 0 []', 'commitMigLayout "g0" []', 'applyMigLayout "node-1" 2 []', 'commitMigLayout "g2" []']);
    expect(calls.indexOf('setPersona "node-1" "vm-passthrough"')).toBeGreaterThan(calls.indexOf('commitMigLayout "g2" []'));
  });
});
