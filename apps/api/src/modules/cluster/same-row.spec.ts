import { isDeepStrictEqual } from 'node:util';
import { Prisma } from '@gantry/db';
import { sameRow } from './same-row';

const row = () => ({
  id: 'n1',
  name: 'node-1',
  stateReason: null as string | null,
  labels: { 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3', zone: 'a' } as Record<string, string>,
  personaChangedAt: new Date('2026-12-01T00:00:00Z') as Date | null,
  leaf: { id: 'l1', name: 'leaf-1', spine: { id: 's1', name: 'spine-1' } },
  gpus: [
    {
      id: 'g0',
      migTarget: ['1g.10gb', '3g.40gb'] as unknown,
      instances: [{ id: 'i0', profile: '1g.10gb', start: 0, size: 1 }],
      allocations: [{ jobId: 'j1', gpuUnits: new Prisma.Decimal('0.5'), migStart: 0 as number | null }],
    },
  ],
});

describe('sameRow: the values of two snapshot rows', () => {
  it('holds two rows read apart with the same values equal (new dates, decimals and nested objects)', () => {
    expect(sameRow(row(), row())).toBe(true);
  });

  it.each([
    ['a scalar', (r: ReturnType<typeof row>) => (r.name = 'node-2')],
    ['null against a value', (r: ReturnType<typeof row>) => (r.stateReason = 'xid 79')],
    ['a date', (r: ReturnType<typeof row>) => (r.personaChangedAt = new Date('2026-12-01T00:00:01Z'))],
    ['a date against null', (r: ReturnType<typeof row>) => (r.personaChangedAt = null)],
    ['a decimal', (r: ReturnType<typeof row>) => (r.gpus[0]!.allocations[0]!.gpuUnits = new Prisma.Decimal('0.25'))],
    ['a label added', (r: ReturnType<typeof row>) => (r.labels.rack = 'r7')],
    ['a label removed', (r: ReturnType<typeof row>) => delete r.labels.zone],
    ['a MIG slice gone', (r: ReturnType<typeof row>) => r.gpus[0]!.instances.pop()],
    ['a MIG target reordered', (r: ReturnType<typeof row>) => (r.gpus[0]!.migTarget = ['3g.40gb', '1g.10gb'])],
    ['an array against an object', (r: ReturnType<typeof row>) => (r.gpus[0]!.migTarget = { 0: '1g.10gb', 1: '3g.40gb' })],
    [
      'a key set to undefined in place of another',
      (r: ReturnType<typeof row>) => (r.labels = { 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3', rack: undefined as unknown as string }),
    ],
    ['a nested name', (r: ReturnType<typeof row>) => (r.leaf.spine.name = 'spine-2')],
  ])('tells a change apart: %s', (_what, change) => {
    const changed = row();
    change(changed);
    expect(sameRow(row(), changed)).toBe(false);
    expect(sameRow(changed, row())).toBe(false);
    expect(isDeepStrictEqual(row(), changed)).toBe(false); // as the comparison it replaces
  });
});
