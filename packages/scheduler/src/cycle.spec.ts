import { runCycle } from './cycle';
import { Engine } from './engine';
import { Registry, SUCCESS, type Profile } from './framework';
import { PROFILES, defaultProfileRegistry } from './profiles';
import { defaultPluginRegistry } from './registry';
import { job, node } from './testing/builders';
import type { ClusterSnapshot, CycleDecision, NodeState, PendingJob, TeamUsage } from './types';

const cluster = (...nodes: NodeState[]): ClusterSnapshot => ({ nodes });
const placedOn = (d: CycleDecision, jobId: string) => d.placed.find((p) => p.jobId === jobId)?.replicas.map((r) => r.nodeId);
const gpusOf = (d: CycleDecision, jobId: string) => d.placed.find((p) => p.jobId === jobId)?.replicas.flatMap((r) => r.gpus);
const reasonsOf = (d: CycleDecision, jobId: string) => d.pending.find((p) => p.jobId === jobId)?.reasons ?? [];

describe('runCycle: whole GPUs', () => {
  it.each([
    { name: 'one GPU lands on the only node', nodes: [node('a').gpus(8).build()], job: job('j').gpus(1).build(), wantNodes: ['a'] },
    {
      name: 'model constraint picks the allowed node',
      nodes: [node('a').gpus(8, 'A100-80GB').build(), node('b').gpus(8, 'H100-80GB').build()],
      job: job('j').gpus(2).models('H100-80GB').build(),
      wantNodes: ['b'],
    },
    {
      name: 'busy node with room wins over an empty node (packing)',
      nodes: [node('a').gpus(8).build(), node('b').gpus(8).allocated(0, 1, 2, 3).build()],
      job: job('j').gpus(4).build(),
      wantNodes: ['b'],
    },
    {
      name: 'cordoned node is skipped',
      nodes: [node('a').gpus(8).cordoned().build(), node('b').gpus(8).build()],
      job: job('j').gpus(1).build(),
      wantNodes: ['b'],
    },
    {
      name: 'unhealthy GPUs do not count',
      nodes: [node('a').gpus(2).unhealthy(0).build(), node('b').gpus(2).build()],
      job: job('j').gpus(2).build(),
      wantNodes: ['b'],
    },
    { name: 'CPU-only job needs no GPU', nodes: [node('a').gpus(1).build()], job: job('j').cpu(4000).build(), wantNodes: ['a'] },
    {
      name: 'vm job needs a vm-passthrough node',
      nodes: [node('a').gpus(8).build(), node('b').gpus(8).persona('vm-passthrough').build()],
      job: job('j').gpus(1).persona('vm-passthrough').build(),
      wantNodes: ['b'],
    },
  ])('$name', ({ nodes, job: j, wantNodes }) => {
    expect(placedOn(runCycle(cluster(...nodes), [j]), j.id)).toEqual(wantNodes);
  });

  it.each([
    { name: '4 GPUs stay inside one NVLink domain', free: [0, 1, 2, 3, 4, 5, 6, 7], busy: [], want: 4, wantDomains: 1 },
    { name: 'tightest domain that holds all (domain 1 has exactly 2 free)', busy: [0, 4, 5], free: [], want: 2, wantIndices: [6, 7] },
  ])('$name', ({ busy, want, wantDomains, wantIndices }) => {
    const d = runCycle(
      cluster(
        node('a')
          .gpus(8)
          .allocated(...busy)
          .build(),
      ),
      [job('j').gpus(want).build()],
    );
    const idx = gpusOf(d, 'j')!.map((g) => g.index);
    if (wantDomains) expect(new Set(idx.map((i) => Math.floor(i / 4))).size).toBe(wantDomains);
    if (wantIndices) expect(idx).toEqual(wantIndices);
  });
});

describe('runCycle: MIG slices and shares', () => {
  it.each([
    {
      name: 'MIG job takes a free slice of its profile and names it',
      nodes: [node('a').gpus(1).mig(0, '3g.40gb@4', '2g.20gb@2', '1g.10gb@0*', '1g.10gb@1').build()],
      job: job('j').migSlice('1g.10gb').build(),
      wantGpu: { index: 0, migProfile: '1g.10gb', migStart: 1 },
    },
    {
      name: 'MIG job prefers the fuller GPU',
      nodes: [node('a').gpus(2).mig(0, '1g.10gb@0', '1g.10gb@1').mig(1, '1g.10gb@0*', '1g.10gb@1').build()],
      job: job('j').migSlice('1g.10gb').build(),
      wantGpu: { index: 1, migProfile: '1g.10gb', migStart: 1 },
    },
    {
      name: 'share fills a shared GPU exactly rather than opening an idle one',
      nodes: [node('a').gpus(2).shared(1, 500).build()],
      job: job('j').share(500).build(),
      wantGpu: { index: 1, milli: 500 },
    },
    {
      name: 'share avoids leaving a residue no seen shape can use',
      nodes: [node('a').gpus(2).shared(1, 500).build()],
      job: job('j').share(400).build(),
      wantGpu: { index: 0, milli: 400 },
    },
    {
      name: 'share may open an idle whole GPU',
      nodes: [node('a').gpus(1).build()],
      job: job('j').share(250).build(),
      wantGpu: { index: 0, milli: 250 },
    },
  ])('$name', ({ nodes, job: j, wantGpu }) => {
    const gpus = gpusOf(runCycle(cluster(...nodes), [j]), j.id);
    expect(gpus).toHaveLength(1);
    expect(gpus![0]).toMatchObject(wantGpu);
  });

  it.each([
    {
      name: 'share never exceeds 1000 milli on a GPU',
      nodes: [node('a').gpus(1).shared(0, 700).build()],
      job: job('j').share(400).build(),
      wantCode: 'insufficient_gpu_share',
    },
    {
      name: 'busy slice is not reused',
      nodes: [node('a').gpus(1).mig(0, '7g.80gb@0*').build()],
      job: job('j').migSlice('7g.80gb').build(),
      wantCode: 'no_free_mig_slice',
    },
    {
      name: 'whole job cannot use a shared GPU',
      nodes: [node('a').gpus(1).shared(0, 100).build()],
      job: job('j').gpus(1).build(),
      wantCode: 'insufficient_gpus',
    },
  ])('$name', ({ nodes, job: j, wantCode }) => {
    const d = runCycle(cluster(...nodes), [j]);
    expect(d.placed).toEqual([]);
    expect(reasonsOf(d, j.id).map((r) => r.code)).toContain(wantCode);
  });
});

describe('runCycle: gangs and topology', () => {
  const leafCluster = () =>
    cluster(
      ...['a1', 'a2', 'a3'].map((id) => node(id).gpus(8).leaf('leaf-a', 'spine-1').build()),
      ...['b1', 'b2', 'b3', 'b4', 'b5', 'b6', 'b7', 'b8'].map((id) => node(id).gpus(8).leaf('leaf-b', 'spine-1').build()),
      ...['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'c9'].map((id) => node(id).gpus(8).leaf('leaf-c', 'spine-2').build()),
    );

  it.each([
    {
      name: '8-replica NCCL job lands under one leaf (the tightest that fits)',
      job: job('j').gpus(8).replicas(8).topology('leaf').build(),
      wantLeaves: ['leaf-b'],
    },
    { name: 'node-level gang of 2 x 4 GPUs shares one node', job: job('j').gpus(4).replicas(2).topology('node').build(), wantNodeCount: 1 },
    { name: 'preferred leaf still prefers the tightest domain', job: job('j').gpus(8).replicas(3).topology('leaf', false).build(), wantLeaves: ['leaf-a'] },
  ])('$name', ({ job: j, wantLeaves, wantNodeCount }) => {
    const snap = leafCluster();
    const d = runCycle(snap, [j]);
    const nodes = placedOn(d, j.id)!;
    expect(nodes).toHaveLength(j.replicas);
    if (wantLeaves) expect([...new Set(nodes.map((n) => snap.nodes.find((x) => x.id === n)!.leaf))]).toEqual(wantLeaves);
    if (wantNodeCount) expect(new Set(nodes).size).toBe(wantNodeCount);
  });

  it.each([
    {
      name: 'required leaf too small: pending, nothing placed',
      job: job('j').gpus(8).replicas(10).topology('leaf').build(),
      wantCode: 'topology_unsatisfiable',
      wantMessage: /under one leaf switch: the best leaf has room for 9/,
    },
    {
      name: 'gang bigger than the cluster: all or nothing',
      job: job('j').gpus(8).replicas(21).build(),
      wantCode: 'gang_unsatisfiable',
      wantMessage: /needs 21 x 8 GPUs/,
    },
  ])('$name', ({ job: j, wantCode, wantMessage }) => {
    const d = runCycle(leafCluster(), [j]);
    expect(d.placed).toEqual([]);
    const r = reasonsOf(d, j.id);
    expect(r[0]!.code).toBe(wantCode);
    expect(r[0]!.message).toMatch(wantMessage);
  });

  it('a gang that would only fit by breaking up is not half-placed; later jobs still see all capacity', () => {
    const snap = cluster(node('a').gpus(8).leaf('l1').build(), node('b').gpus(8).leaf('l2').build());
    const d = runCycle(snap, [job('gang').gpus(8).replicas(2).topology('leaf').createdAt(1).build(), job('small').gpus(8).createdAt(2).build()]);
    expect(placedOn(d, 'gang')).toBeUndefined();
    expect(placedOn(d, 'small')).toHaveLength(1);
  });
});

describe('runCycle: a bounded cycle', () => {
  it('stops after maxPlacements placements; the rest, in queue order, are deferred untried, not explained as unplaceable', () => {
    const snap = cluster(node('a').gpus(8).build());
    const jobs = [
      job('too-big').gpus(16).createdAt(1).build(),
      job('j1').gpus(1).createdAt(2).build(),
      job('j2').gpus(1).createdAt(3).build(),
      job('j3').gpus(1).createdAt(4).build(),
      job('j4').gpus(1).createdAt(5).build(),
    ];
    const d = runCycle(snap, jobs, { maxPlacements: 2 });
    expect(d.placed.map((p) => p.jobId)).toEqual(['j1', 'j2']);
    expect(d.pending.map((p) => p.jobId)).toEqual(['too-big']); // tried and left with its reasons
    expect(d.deferred).toEqual(['j3', 'j4']);
    expect(runCycle(snap, jobs).deferred).toBeUndefined();
  });
});

describe('runCycle: pending reasons', () => {
  it('aggregates reasons per cause with node counts a person can read', () => {
    const nodes = [
      ...Array.from({ length: 1180 }, (_, i) => node(`s${i}`).gpus(1, 'A100-80GB').shared(0, 900).build()),
      ...Array.from({ length: 33 }, (_, i) => node(`t${i}`).gpus(1, 'T4').build()),
    ];
    const d = runCycle(cluster(...nodes), [job('j').share(500).models('A100-80GB').build()]);
    const r = reasonsOf(d, 'j');
    expect(r[0]!.message).toBe('needs 0.5 GPU (A100-80GB): 0 of 1,213 nodes fit (1,180 nodes: not enough free GPU share; 33 nodes: GPU model not allowed)');
    expect(r.slice(1)).toEqual([
      { code: 'insufficient_gpu_share', message: '1,180 nodes: not enough free GPU share' },
      { code: 'gpu_model_not_allowed', message: '33 nodes: GPU model not allowed' },
    ]);
  });

  it.each([
    { name: 'unknown MIG profile is unresolvable', job: job('j').migSlice('5g.50gb').build(), wantCode: 'unknown_mig_profile' },
    { name: 'more GPUs per replica than any node has', job: job('j').gpus(16).build(), wantCode: 'too_many_gpus' },
    { name: 'memory does not fit', job: job('j').gpus(1).memory(10_000_000).build(), wantCode: 'insufficient_memory' },
    { name: 'CPU does not fit', job: job('j').gpus(1).cpu(999_999).build(), wantCode: 'insufficient_cpu' },
  ])('$name', ({ job: j, wantCode }) => {
    const d = runCycle(cluster(node('a').gpus(8).build()), [j]);
    expect(reasonsOf(d, j.id).map((x) => x.code)).toContain(wantCode);
  });
});

describe('runCycle: ordering', () => {
  const one = () => cluster(node('a').gpus(1).build());
  it.each([
    {
      name: 'higher priority first',
      jobs: [job('low').gpus(1).priority(0).createdAt(1).build(), job('high').gpus(1).priority(10).createdAt(2).build()],
      wantPlaced: 'high',
    },
    { name: 'same priority: older first', jobs: [job('new').gpus(1).createdAt(2).build(), job('old').gpus(1).createdAt(1).build()], wantPlaced: 'old' },
    {
      name: 'same priority: team with the lower dominant share first',
      jobs: [job('rich').gpus(1).team('rich').createdAt(1).build(), job('poor').gpus(1).team('poor').createdAt(2).build()],
      usage: { rich: { gpus: 4, cpuMilli: 0, memoryMiB: 0 } },
      wantPlaced: 'poor',
    },
    {
      name: 'weights scale the share',
      jobs: [job('x').gpus(1).team('x').createdAt(1).build(), job('y').gpus(1).team('y').createdAt(2).build()],
      usage: { x: { gpus: 4, cpuMilli: 0, memoryMiB: 0 }, y: { gpus: 2, cpuMilli: 0, memoryMiB: 0 } },
      weights: { x: 4 },
      wantPlaced: 'x',
    },
  ])('$name', ({ jobs, usage, weights, wantPlaced }) => {
    const d = runCycle(one(), jobs as PendingJob[], {
      teamUsage: usage as Record<string, TeamUsage> | undefined,
      teamWeights: weights as Record<string, number> | undefined,
    });
    expect(d.placed.map((p) => p.jobId)).toEqual([wantPlaced]);
  });
});

describe('profiles and registry', () => {
  it.each([
    { name: 'best-fit packs onto the busier node', profile: 'best-fit', wantNode: 'busy' },
    { name: 'spread picks the emptier node', profile: 'spread', wantNode: 'empty' },
    { name: 'gantry packs too', profile: 'gantry', wantNode: 'busy' },
  ])('$name', ({ profile, wantNode }) => {
    const snap = cluster(node('empty').gpus(8).build(), node('busy').gpus(8).allocated(0, 1, 2, 3, 4).build());
    expect(placedOn(runCycle(snap, [job('j').gpus(1).build()], { profile }), 'j')).toEqual([wantNode]);
  });

  it('registry refuses a duplicate name with an error status', () => {
    const r = defaultPluginRegistry();
    expect(r.register('fragmentation', () => ({ name: 'x', filter: () => SUCCESS })).code).toBe('error');
    expect(new Registry<number>('thing').register('a', 1)).toBe(SUCCESS);
    expect(defaultProfileRegistry().register('gantry', PROFILES.gantry!).reasons[0]!.message).toMatch(/already registered/);
  });

  it('unknown profile yields error statuses, not exceptions', () => {
    const d = runCycle(cluster(node('a').gpus(1).build()), [job('j').gpus(1).build()], { profile: 'nope' });
    expect(d.pending[0]!.reasons[0]!.code).toBe('unknown_profile');
  });

  it('a custom profile with a custom filter plugin runs', () => {
    const plugins = defaultPluginRegistry();
    plugins.register('no-b', () => ({
      name: 'no-b',
      filter: (_s, _j, n) => (n.id === 'b' ? { code: 'unschedulable', reasons: [{ code: 'no_b', message: 'b is reserved' }] } : SUCCESS),
    }));
    const profiles = defaultProfileRegistry();
    const p: Profile = { ...PROFILES.gantry!, name: 'custom', filter: [...PROFILES.gantry!.filter, 'no-b'] };
    profiles.register('custom', p);
    const snap = cluster(node('a').gpus(8).allocated(0, 1, 2, 3, 4, 5, 6, 7).build(), node('b').gpus(8).build());
    const d = runCycle(snap, [job('j').gpus(1).build()], { profile: 'custom', plugins, profiles });
    expect(reasonsOf(d, 'j').map((r) => r.message)).toContain('1 node: b is reserved');
  });
});

describe('engine', () => {
  it('does not mutate the caller snapshot', () => {
    const snap = cluster(node('a').gpus(8).build());
    const before = JSON.stringify(snap);
    runCycle(snap, [job('j').gpus(8).build()]);
    expect(JSON.stringify(snap)).toBe(before);
  });

  it('engines on the same frozen states share GPU views until a change: one engine`s placements, releases and undos never show in another`s', () => {
    const snap = cluster(node('a').gpus(2).build(), node('b').gpus(1).build(), node('m').gpus(1).mig(0, '3g.40gb@0', '3g.40gb@4').build());
    const before = JSON.stringify(snap);
    const first = new Engine(snap, { frozenStates: true });
    expect(first.place(job('j').gpus(2).build()).replicas.map((r) => r.nodeId)).toEqual(['a']);
    const slice = first.place(job('s').migSlice('3g.40gb').build());
    expect(slice.replicas.map((r) => r.nodeId)).toEqual(['m']);
    const undo = first.release(slice.replicas, job('s').migSlice('3g.40gb').build().request);
    undo();
    // a second engine of the next cycle on the same states sees them as they are, not as the first left its copy
    const second = new Engine(snap, { frozenStates: true });
    expect(second.nodes[0]!.gpus.map((g) => g.allocated)).toEqual([false, false]);
    expect(second.nodes[2]!.gpus[0]!.mig.map((s) => s.busy)).toEqual([false, false]);
    expect(second.place(job('k').gpus(2).build()).replicas.map((r) => r.nodeId)).toEqual(['a']);
    expect(first.nodes[0]!.gpus.map((g) => g.allocated)).toEqual([true, true]);
    expect(first.nodes[2]!.gpus[0]!.mig.filter((s) => s.busy)).toHaveLength(1);
    // nodes neither engine changed still share their views; the caller's snapshot is untouched
    expect(second.nodes[1]!.gpus).toBe(first.nodes[1]!.gpus);
    expect(JSON.stringify(snap)).toBe(before);
  });

  it('release() frees a placement for what-if and undo restores it', () => {
    const e = new Engine(cluster(node('a').gpus(1).build()));
    const j = job('j').gpus(1).build();
    const r = e.place(j);
    expect(e.place(job('k').gpus(1).build()).status.code).toBe('unschedulable');
    const undo = e.release(r.replicas, j.request);
    expect(e.nodes[0]!.gpus[0]!.allocated).toBe(false);
    undo();
    expect(e.nodes[0]!.gpus[0]!.allocated).toBe(true);
  });

  it('learns the shape mix from what it has seen (submit observes)', () => {
    const e = new Engine(cluster(node('a').gpus(8).build()));
    e.submit(job('j').share(500).build());
    e.submit(job('k').share(500).build());
    expect(e.mix.observed).toBe(2);
  });
});
