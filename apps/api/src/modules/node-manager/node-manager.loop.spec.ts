import { NodeManagerLoop, ORPHAN_AFTER_MS } from './node-manager.loop';

/** Changes in flight whose queue job was lost (Redis restarted empty) are re-enqueued from Postgres. */
describe('NodeManagerLoop.rederive', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const old = new Date(now.getTime() - ORPHAN_AFTER_MS - 1000);
  const fresh = new Date(now.getTime() - 100);

  function loop(live: { mig?: object[]; persona?: object[]; failover?: object[]; power?: object[] }) {
    const sent: string[] = [];
    const repo = {
      gpusWithMigTarget: async () => [
        { id: 'g-lost', migTarget: [{ profile: '1g.10gb', start: 0 }], migRequestedAt: old },
        { id: 'g-queued', migTarget: [], migRequestedAt: old },
        { id: 'g-new', migTarget: [], migRequestedAt: fresh },
      ],
      nodesInTransition: async () => [
        { id: 'n-switch', state: 'switching', personaTarget: 'vm_passthrough', transitionStartedAt: old },
        { id: 'n-drain', state: 'draining', personaTarget: null, transitionStartedAt: old },
        { id: 'n-queued', state: 'draining', personaTarget: null, transitionStartedAt: old },
      ],
      openIncidents: async () => [
        { id: 'i-lost', detectedAt: old, nodeId: 'n1' },
        { id: 'i-queued', detectedAt: old, nodeId: 'n2' },
        { id: 'i-faulting', detectedAt: old, nodeId: 'n3' },
      ],
      nodeNames: async () => [{ id: 'n3', name: 'node-3', state: 'down' }],
      nodesPowering: async () => [
        { id: 'n-booting', powerState: 'powering_up', powerChangedAt: old },
        { id: 'n-stopping', powerState: 'powering_down', powerChangedAt: old },
        { id: 'n-power-queued', powerState: 'powering_up', powerChangedAt: old },
        { id: 'n-power-new', powerState: 'powering_down', powerChangedAt: fresh },
      ],
    };
    const queues = {
      liveJobData: async (q: 'mig' | 'persona' | 'failover' | 'power') => live[q] ?? [],
      power: async (p: { action: string; nodeId: string }) => void sent.push(`power ${p.action} ${p.nodeId}`),
      mig: async (p: { gpuId: string }) => void sent.push(`mig ${p.gpuId}`),
      persona: async (p: { action: string; nodeId: string; persona?: string }) =>
        void sent.push(`persona ${p.action} ${p.nodeId}${p.persona ? ` ${p.persona}` : ''}`),
      failover: async (p: { action: string; incidentId?: string }) => void sent.push(`failover ${p.action} ${p.incidentId}`),
    };
    const l = new NodeManagerLoop(
      repo as never,
      repo as never,
      repo as never,
      repo as never,
      {} as never,
      {} as never,
      queues as never,
      { reconcileSeconds: 1, driver: { simSpeed: 1 } } as never,
      repo as never,
    );
    return { l, sent };
  }

  it('re-enqueues only what has no live job and is not brand new', async () => {
    const { l, sent } = loop({
      mig: [{ gpuId: 'g-queued' }],
      persona: [{ nodeId: 'n-queued' }],
      failover: [
        { action: 'remediate', incidentId: 'i-queued' },
        { action: 'fault', nodeName: 'node-3' },
      ],
      power: [{ action: 'on', nodeId: 'n-power-queued' }],
    });
    expect(await l.rederive(now)).toBe(6);
    expect(sent).toEqual([
      'mig g-lost',
      'persona switch n-switch vm-passthrough',
      'persona drain n-drain',
      'power on n-booting',
      'power off n-stopping',
      'failover remediate i-lost',
    ]);
  });
});
