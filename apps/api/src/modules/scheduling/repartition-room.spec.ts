import type { ClusterSnapshot, GpuState, NodeState } from '@gantry/scheduler';
import { RepartitionRoom } from './repartition-room';

// a whole GPU and a node of one, as the worker's snapshot derives them (fields overridden per case)
const base = { index: 0, nvlinkDomain: 0, healthy: true, schedulable: true, mode: 'whole', allocated: false, sharedMilliUsed: 0, mig: [] } as const;
const gpu = (id: string, model: string, o: Partial<GpuState> = {}): GpuState => ({ ...base, mig: [], id, model, ...o });
const capacity = { cpuMilli: 64000, memoryMiB: 512000, cpuMilliFree: 64000, memoryMiBFree: 512000 };
const node = (id: string, gpus: GpuState[], o: Partial<NodeState> = {}): NodeState => ({
  id,
  name: id,
  leaf: 'l',
  spine: 's',
  schedulable: true,
  persona: 'container',
  ...capacity,
  gpus,
  ...o,
});

describe('MIG work served by a re-partition instead of a preemption', () => {
  const busyH100 = node('h1', [
    gpu('h1/0', 'H100-80GB', { allocated: true }),
    gpu('h1/1', 'H100-80GB', { mode: 'mig', mig: [{ profile: '1g.10gb', start: 0, size: 1, busy: true }] }),
  ]);

  it('waits for a re-partition while an idle whole GPU of an allowed model is left after the whole-GPU demand', () => {
    const snapshot: ClusterSnapshot = { nodes: [busyH100, node('h2', [gpu('h2/0', 'H100-80GB'), gpu('h2/1', 'H100-80GB')])] };
    expect(new RepartitionRoom(snapshot, []).serves('1g.10gb', ['H100-80GB'])).toBe(true);
    expect(new RepartitionRoom(snapshot, [{ count: 1, gpuModels: ['H100-80GB'] }]).serves('1g.10gb')).toBe(true);
    // the planner never partitions below the whole-GPU demand
    expect(new RepartitionRoom(snapshot, [{ count: 2 }]).serves('1g.10gb')).toBe(false);
    // demand for another model leaves the H100s to the slice
    expect(new RepartitionRoom(snapshot, [{ count: 2, gpuModels: ['A100-80GB'] }]).serves('1g.10gb')).toBe(true);
  });

  it('does not count GPUs that cannot be re-partitioned for the job', () => {
    const idle = (id: string, model = 'H100-80GB', o: Partial<NodeState> = {}, g: Partial<GpuState> = {}) => node(id, [gpu(`${id}/0`, model, g)], o);
    const roomWith = (...nodes: NodeState[]) => new RepartitionRoom({ nodes: [busyH100, ...nodes] }, []);
    expect(roomWith().serves('1g.10gb')).toBe(false);
    expect(roomWith(idle('a', 'A100-80GB')).serves('1g.10gb', ['H100-80GB'])).toBe(false);
    expect(roomWith(idle('a', 'A100-80GB')).serves('1g.10gb')).toBe(true);
    // a profile the model has no such slice of (A100 slices are 1g.10gb on the 80 GB model, not 1g.12gb)
    expect(roomWith(idle('a', 'A100-80GB')).serves('1g.12gb')).toBe(false);
    expect(roomWith(idle('c', 'H100-80GB', { schedulable: false })).serves('1g.10gb')).toBe(false);
    expect(roomWith(idle('v', 'H100-80GB', { persona: 'vm-passthrough' })).serves('1g.10gb')).toBe(false);
    expect(roomWith(idle('u', 'H100-80GB', {}, { healthy: false })).serves('1g.10gb')).toBe(false);
    expect(roomWith(idle('m', 'H100-80GB', {}, { schedulable: false })).serves('1g.10gb')).toBe(false);
    expect(roomWith(idle('s', 'H100-80GB', {}, { mode: 'shared', sharedMilliUsed: 250 })).serves('1g.10gb')).toBe(false);
  });
});
