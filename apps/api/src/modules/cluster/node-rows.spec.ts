import { assembleNodeRows, type FlatNodeRows } from './node-rows';

const node = (id: string, over: Partial<FlatNodeRows['nodes'][number]> = {}) =>
  ({
    id,
    name: `node-${id}`,
    leafId: 'leaf-1',
    leafName: 'l1',
    spineId: 'spine-1',
    spineName: 's1',
    state: 'ready',
    persona: 'container',
    personaTarget: null,
    powerState: 'on',
    bareMetalLeaseId: null,
    leaseName: null,
    leaseTenantId: null,
    leaseTeamId: null,
    ...over,
  }) as unknown as FlatNodeRows['nodes'][number];
const gpu = (id: string, nodeId: string, index: number) => ({ id, nodeId, index, model: 'H100-80GB' }) as unknown as FlatNodeRows['gpus'][number];

describe('assembleNodeRows', () => {
  it('nests GPUs under their node, slices and active allocations under their GPU, leaf, spine and lease under the node', () => {
    const rows = assembleNodeRows({
      nodes: [
        node('a', { persona: 'vm-passthrough' as never, powerState: 'powering-up' as never }),
        node('b', { bareMetalLeaseId: 'lease-1', leaseName: 'bm', leaseTenantId: 't1', leaseTeamId: 'team-1', personaTarget: 'vm-passthrough' as never }),
        node('c'),
      ],
      gpus: [gpu('a0', 'a', 0), gpu('a1', 'a', 1), gpu('b0', 'b', 0)],
      instances: [
        { id: 'i1', gpuId: 'a1', profile: '3g.40gb', start: 0, size: 4 },
        { id: 'i2', gpuId: 'a1', profile: '3g.40gb', start: 4, size: 4 },
      ],
      allocations: [
        { gpuId: 'a1', jobId: 'j1', tenantId: 't1', migStart: 4, milli: 1000, gpuUnits: '0.4286', cpuMilli: 100, memoryMiB: 10 },
        { gpuId: 'b0', jobId: null, tenantId: 't2', migStart: null, milli: 500, gpuUnits: '0.5000', cpuMilli: 0, memoryMiB: 0 },
      ],
    });
    expect(rows.map((n) => [n.id, n.gpus.map((g) => g.id)])).toEqual([
      ['a', ['a0', 'a1']],
      ['b', ['b0']],
      ['c', []],
    ]);
    const [a, b] = rows;
    expect(a!.leaf).toEqual({ id: 'leaf-1', name: 'l1', spineId: 'spine-1', spine: { id: 'spine-1', name: 's1' } });
    expect(a!.bareMetalLease).toBeNull();
    expect(b!.bareMetalLease).toEqual({ id: 'lease-1', name: 'bm', tenantId: 't1', teamId: 'team-1' });
    expect(a!.gpus[0]!.instances).toEqual([]);
    expect(a!.gpus[1]!.instances.map((i) => i.start)).toEqual([0, 4]);
    expect(a!.gpus[1]!.allocations).toEqual([expect.objectContaining({ jobId: 'j1', tenantId: 't1', migStart: 4, milli: 1000, cpuMilli: 100, memoryMiB: 10 })]);
    expect(a!.gpus[1]!.allocations[0]!.gpuUnits.toNumber()).toBe(0.4286);
    expect(b!.gpus[0]!.allocations[0]!.gpuUnits.toNumber()).toBe(0.5);
    // enum values as Prisma spells them (Postgres stores the @map spelling)
    expect([a!.persona, a!.powerState, a!.personaTarget]).toEqual(['vm_passthrough', 'powering_up', null]);
    expect([b!.persona, b!.powerState, b!.personaTarget]).toEqual(['container', 'on', 'vm_passthrough']);
    // the flat columns of the joins do not leak into the node
    expect(Object.keys(a!)).not.toEqual(expect.arrayContaining(['leafName', 'spineName', 'leaseName']));
  });
});
