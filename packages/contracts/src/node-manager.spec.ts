import { partitionModeLayoutOf } from './gpu-catalog';
import { ZMigLayoutRequest } from './node-manager';

describe('PUT /v1/gpus/:id/mig body', () => {
  it('takes every partition of an MI300X in CPX (8), and no more than one per memory slot', () => {
    const cpx = partitionModeLayoutOf('MI300X-192GB', 'cpx_nps4')!;
    expect(cpx).toHaveLength(8);
    expect(ZMigLayoutRequest.safeParse({ layout: cpx }).success).toBe(true);
    const nine = ZMigLayoutRequest.safeParse({ layout: [...cpx, { profile: 'cpx_nps4', start: 0 }] });
    expect(nine.success).toBe(false);
    expect(!nine.success && nine.error.issues[0]!.path).toEqual(['layout']);
  });
});
