import { NodeManagerLoop, ORPHAN_AFTER_MS, REPLAN_AFTER_MS } from './node-manager.loop';

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

/** A cycle's request for MIG planning: at once for work the last round did not see, at most once a second for the same work. */
describe('NodeManagerLoop.planSoon', () => {
  function loop() {
    let rounds = 0;
    const pending = [
      { id: 'j1', kind: 'notebook', replicas: 1, resources: { migProfile: '1g.10gb' }, tried: true },
      { id: 'j2', kind: 'notebook', replicas: 1, resources: { migProfile: '1g.10gb' }, tried: false },
    ];
    const snapshots = { read: async () => (rounds++, { nodes: [] }) };
    const demand = { unplacedPendingJobs: async () => pending, missingReplicas: async () => [] };
    const l = new NodeManagerLoop(
      {} as never,
      {} as never,
      {} as never,
      demand as never,
      snapshots as never,
      { request: async () => undefined } as never,
      {} as never,
      { reconcileSeconds: 60, driver: { simSpeed: 1 }, power: { enabled: false } } as never,
      {} as never,
    );
    return { l, rounds: () => rounds };
  }
  const settle = () => new Promise((r) => setTimeout(r, 20));

  it('plans new waiting work at once and folds repeated requests for the same work into one round a second later', async () => {
    const { l, rounds } = loop();
    l.planSoon(['j1']);
    await settle();
    expect(rounds()).toBe(1);
    // the next cycles leave the same job waiting: no round now
    l.planSoon(['j1']);
    l.planSoon(['j1']);
    await settle();
    expect(rounds()).toBe(1);
    // a job the last round had not seen (j2 had no reason yet): planned at once
    l.planSoon(['j2']);
    await settle();
    expect(rounds()).toBe(2);
    // the folded request runs once, REPLAN_AFTER_MS after the round it waited for
    await new Promise((r) => setTimeout(r, REPLAN_AFTER_MS + 100));
    expect(rounds()).toBe(3);
    l.beforeApplicationShutdown();
  });
});
