import { planPower, queuedReplicasOf, type PowerNode } from './power-planning';

const NOW = 10_000_000;
const IDLE = 60_000;
const node = (id: string, over: Partial<PowerNode> = {}): PowerNode => ({
  id,
  state: 'ready',
  powerState: 'on',
  gpuModel: 'A100-80GB',
  gpuCount: 8,
  gpusFree: 8,
  allocations: 0,
  emptySinceMs: NOW - 2 * IDLE,
  failedPowerUp: false,
  ...over,
});
const plan = (nodes: PowerNode[], demand: { gpus: number; replicas?: number; gpuModel?: string }[] = [], headroom = 0) =>
  planPower({ nodes, demand: demand.map((d, i) => ({ jobId: `j${i}`, replicas: 1, ...d })), nowMs: NOW, idleMs: IDLE, headroom });

describe('planPower', () => {
  it('powers down nodes empty past the idle time, latest first, keeping one of each model on', () => {
    const p = plan([node('n1'), node('n2'), node('n3'), node('h1', { gpuModel: 'H100-80GB' })]);
    expect(p.down.map((d) => d.nodeId)).toEqual(['n3', 'n2']);
    expect(p.up).toEqual([]);
  });

  it('never picks a node holding work, a node empty for less than the idle time, or a cordoned one', () => {
    const p = plan([
      node('n1'),
      node('n2', { allocations: 1, gpusFree: 7 }),
      node('n3', { emptySinceMs: NOW - IDLE / 2 }),
      node('n4', { state: 'cordoned' }),
      node('n5'),
    ]);
    expect(p.down.map((d) => d.nodeId)).toEqual(['n5', 'n1']);
  });

  it('keeps free GPUs for the queue and the headroom', () => {
    // 24 free GPUs on three empty nodes; 8 queued + 25 % of 32 = 16 kept: one node may go
    const nodes = [node('n1'), node('n2'), node('n3'), node('n4', { allocations: 8, gpusFree: 0 })];
    expect(plan(nodes, [{ gpus: 8, gpuModel: 'H100-80GB' }], 0.25).down.map((d) => d.nodeId)).toEqual(['n3']);
    expect(plan(nodes, [{ gpus: 16 }], 0.25).down).toEqual([]);
  });

  it('boots an off node for queued replicas that fit nowhere, one node for replicas that share it', () => {
    const nodes = [node('n1', { allocations: 8, gpusFree: 0 }), node('n2', { powerState: 'off' }), node('n3', { powerState: 'off' })];
    const p = plan(nodes, [{ gpus: 4, replicas: 2 }]);
    expect(p.up.map((u) => u.nodeId)).toEqual(['n2']);
    expect(p.up[0]!.reason).toMatch(/queued job j0 needs 4 GPU/);
    expect(p.down).toEqual([]);
    // a node already booting serves the demand: nothing more boots
    expect(plan([nodes[0]!, node('n2', { powerState: 'powering-up' }), nodes[2]!], [{ gpus: 4, replicas: 2 }]).up).toEqual([]);
  });

  it('boots only a node of the model asked, never one whose power-up failed or a cordoned one', () => {
    const nodes = [
      node('n1', { allocations: 8, gpusFree: 0 }),
      node('a-failed', { powerState: 'off', failedPowerUp: true }),
      node('b-cordoned', { powerState: 'off', state: 'cordoned' }),
      node('c-h100', { powerState: 'off', gpuModel: 'H100-80GB' }),
      node('d-ok', { powerState: 'off' }),
    ];
    expect(plan(nodes, [{ gpus: 8, gpuModel: 'A100-80GB' }]).up.map((u) => u.nodeId)).toEqual(['d-ok']);
    expect(plan(nodes, [{ gpus: 8, gpuModel: 'H100-80GB' }]).up.map((u) => u.nodeId)).toEqual(['c-h100']);
    expect(plan(nodes, [{ gpus: 16 }]).up).toEqual([]);
  });

  it('counts a MIG slice or a GPU share as room on one GPU', () => {
    expect(
      queuedReplicasOf([
        { id: 'a', kind: 'batch', replicas: 2, resources: { migProfile: '1g.10gb' } },
        { id: 'b', kind: 'batch', replicas: 1, resources: { gpuFraction: 0.5 } },
        { id: 'c', kind: 'batch', replicas: 1, resources: { gpus: 4, gpuModel: 'H100-80GB' } },
      ]),
    ).toEqual([
      { jobId: 'a', gpus: 1, gpuModel: undefined, replicas: 2 },
      { jobId: 'b', gpus: 1, gpuModel: undefined, replicas: 1 },
      { jobId: 'c', gpus: 4, gpuModel: 'H100-80GB', replicas: 1 },
    ]);
  });
});
