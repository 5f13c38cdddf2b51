import { creditInFlight, migDemandOf, planPersonas, vmDemandOf, type PersonaNode } from './demand-planning';

const node = (id: string, over: Partial<PersonaNode> = {}): PersonaNode => ({
  id,
  persona: 'container',
  state: 'ready',
  personaTarget: null,
  gpuModel: 'H100-80GB',
  gpuCount: 8,
  gpusFree: 8,
  idle: true,
  personaChangedAtMs: null,
  ...over,
});

describe('planPersonas (look ahead in the queue)', () => {
  it.each([
    {
      name: 'switches an idle container node for a pending VM job',
      nodes: [node('a', { idle: false, gpusFree: 4 }), node('b')],
      vm: [{ jobId: 'j', gpus: 4, replicas: 1 }],
      wantSwitches: [{ nodeId: 'b', persona: 'vm-passthrough' }],
      wantUnmet: 0,
    },
    {
      name: 'uses a vm-passthrough node with room before switching another',
      nodes: [node('a', { persona: 'vm-passthrough', gpusFree: 8 }), node('b')],
      vm: [{ jobId: 'j', gpus: 4, replicas: 2 }],
      wantSwitches: [],
      wantUnmet: 0,
    },
    {
      name: 'counts a node already switching to vm-passthrough as supply',
      nodes: [node('a', { state: 'switching', personaTarget: 'vm-passthrough' }), node('b')],
      vm: [{ jobId: 'j', gpus: 8, replicas: 1 }],
      wantSwitches: [],
      wantUnmet: 0,
    },
    {
      name: 'one node per 8-GPU replica, only of the wanted model',
      nodes: [node('a', { gpuModel: 'A100-80GB' }), node('b'), node('c')],
      vm: [{ jobId: 'j', gpus: 8, gpuModel: 'H100-80GB', replicas: 2 }],
      wantSwitches: [
        { nodeId: 'b', persona: 'vm-passthrough' },
        { nodeId: 'c', persona: 'vm-passthrough' },
      ],
      wantUnmet: 0,
    },
    {
      name: 'never switches a busy node; unmet demand is reported',
      nodes: [node('a', { idle: false, gpusFree: 7 })],
      vm: [{ jobId: 'j', gpus: 1, replicas: 1 }],
      wantSwitches: [],
      wantUnmet: 1,
    },
    {
      name: 'gives an idle VM node back to containers when no VM demand is left',
      nodes: [node('a', { persona: 'vm-passthrough' }), node('b', { persona: 'vm-passthrough', idle: false, gpusFree: 0 })],
      vm: [],
      wantSwitches: [{ nodeId: 'a', persona: 'container' }],
      wantUnmet: 0,
    },
    {
      name: 'hysteresis: a node that switched a minute ago stays',
      nodes: [node('a', { persona: 'vm-passthrough', personaChangedAtMs: 1_000_000 })],
      vm: [],
      wantSwitches: [],
      wantUnmet: 0,
    },
    {
      name: 'hysteresis: a container node that just came back is not switched again',
      nodes: [node('a', { personaChangedAtMs: 1_000_000 })],
      vm: [{ jobId: 'j', gpus: 1, replicas: 1 }],
      wantSwitches: [],
      wantUnmet: 1,
    },
  ])('$name', ({ nodes, vm, wantSwitches, wantUnmet }) => {
    const plan = planPersonas({ nodes, vmDemand: vm, nowMs: 1_060_000, holdMs: 600_000 });
    expect(plan.switches.map(({ nodeId, persona }) => ({ nodeId, persona }))).toEqual(wantSwitches);
    expect(plan.unmetReplicas).toBe(wantUnmet);
  });
});

describe('demand of the queue', () => {
  it('sums MIG slices and whole GPUs per model, leaving VM jobs to personas', () => {
    const rows = [
      { id: '1', kind: 'batch', replicas: 3, resources: { migProfile: '1g.10gb', gpuModel: 'H100-80GB' } },
      { id: '2', kind: 'batch', replicas: 1, resources: { migProfile: '1g.10gb', gpuModel: 'H100-80GB' } },
      { id: '3', kind: 'training', replicas: 2, resources: { gpus: 4 } },
      { id: '4', kind: 'vm', replicas: 1, resources: { gpus: 8, gpuModel: 'A100-80GB' } },
    ];
    const d = migDemandOf(rows);
    expect(d.migDemand).toEqual([{ profile: '1g.10gb', count: 4, gpuModels: ['H100-80GB'] }]);
    expect(d.wholeDemand).toEqual([{ count: 8, gpuModels: undefined }]);
    expect(vmDemandOf(rows)).toEqual([{ jobId: '4', gpus: 8, gpuModel: 'A100-80GB', replicas: 1 }]);
  });
});

describe('creditInFlight', () => {
  it.each([
    {
      name: 'a change creating two free 1g slices serves two pending 1g jobs',
      demand: { migDemand: [{ profile: '1g.10gb', count: 3 }], wholeDemand: [] },
      inFlight: [{ model: 'H100-80GB', target: [0, 1].map((start) => ({ profile: '1g.10gb', start })), busyStarts: new Set<number>() }],
      wantMig: [{ profile: '1g.10gb', count: 1 }],
      wantWhole: [],
    },
    {
      name: 'a busy slice kept by the change serves nobody',
      demand: { migDemand: [{ profile: '1g.10gb', count: 1 }], wholeDemand: [] },
      inFlight: [{ model: 'H100-80GB', target: [{ profile: '1g.10gb', start: 0 }], busyStarts: new Set([0]) }],
      wantMig: [{ profile: '1g.10gb', count: 1 }],
      wantWhole: [],
    },
    {
      name: 'a slice of another model does not serve a model-pinned job',
      demand: { migDemand: [{ profile: '1g.10gb', count: 1, gpuModels: ['A100-80GB'] }], wholeDemand: [] },
      inFlight: [{ model: 'H100-80GB', target: [{ profile: '1g.10gb', start: 0 }], busyStarts: new Set<number>() }],
      wantMig: [{ profile: '1g.10gb', count: 1, gpuModels: ['A100-80GB'] }],
      wantWhole: [],
    },
    {
      name: 'a GPU going back to full size serves one whole GPU',
      demand: { migDemand: [], wholeDemand: [{ count: 2 }] },
      inFlight: [{ model: 'H100-80GB', target: [], busyStarts: new Set<number>() }],
      wantMig: [],
      wantWhole: [{ count: 1 }],
    },
  ])('$name', ({ demand, inFlight, wantMig, wantWhole }) => {
    const got = creditInFlight(demand, inFlight);
    expect(got.migDemand).toEqual(wantMig);
    expect(got.wholeDemand).toEqual(wantWhole);
  });
});
