import { inventoryOf, validateRequest, type RequestToValidate } from './validate-request';
import { node } from './testing/builders';

const inventory = inventoryOf({ nodes: [node('a').gpus(8, 'H100-80GB').build(), node('b').gpus(4, 'A100-40GB').build(), node('c').gpus(2, 'T4').build()] });
const req = (r: RequestToValidate['request'], extra: Partial<RequestToValidate> = {}): RequestToValidate => ({
  replicas: 1,
  request: { cpuMilli: 1000, memoryMiB: 1024, ...r },
  ...extra,
});

describe('validateRequest', () => {
  it.each([
    { name: 'whole GPUs that fit a node', r: req({ gpus: 8 }), wantCode: undefined },
    { name: 'MIG profile on an allowed model', r: req({ migProfile: '1g.5gb', gpuModels: ['A100-40GB'] }), wantCode: undefined },
    { name: 'fraction inside (0,1)', r: req({ gpuFraction: 0.25 }), wantCode: undefined },
    { name: 'CPU-only request', r: req({}), wantCode: undefined },
    { name: 'unknown MIG profile', r: req({ migProfile: '5g.50gb' }), wantCode: 'unknown_mig_profile', wantMessage: /5g\.50gb/ },
    {
      name: 'profile not on any allowed model',
      r: req({ migProfile: '1g.10gb+me', gpuModels: ['A100-40GB'] }),
      wantCode: 'mig_profile_not_on_model',
      wantMessage: /A100-40GB/,
    },
    { name: 'fraction of 1 is not a share', r: req({ gpuFraction: 1 }), wantCode: 'invalid_fraction' },
    { name: 'fraction of 0', r: req({ gpuFraction: 0 }), wantCode: 'invalid_fraction' },
    { name: 'negative fraction', r: req({ gpuFraction: -0.5 }), wantCode: 'invalid_fraction' },
    { name: 'more GPUs per replica than any node has', r: req({ gpus: 9 }), wantCode: 'too_many_gpus', wantMessage: /no node has more than 8/ },
    { name: 'more GPUs than any allowed-model node has', r: req({ gpus: 4, gpuModels: ['T4'] }), wantCode: 'too_many_gpus', wantMessage: /more than 2 T4/ },
    { name: 'two kinds at once', r: req({ gpus: 1, gpuFraction: 0.5 }), wantCode: 'ambiguous_request' },
    { name: 'unknown GPU model', r: req({ gpus: 1, gpuModels: ['B200'] }), wantCode: 'unknown_gpu_model', wantMessage: /B200/ },
    {
      name: 'impossible topology: 4 x 4 GPUs on one node',
      r: req({ gpus: 4 }, { replicas: 4, topology: { level: 'node', required: true } }),
      wantCode: 'impossible_topology',
      wantMessage: /16 GPUs/,
    },
    {
      name: 'preferred node topology is not impossible',
      r: req({ gpus: 4 }, { replicas: 4, topology: { level: 'node', required: false } }),
      wantCode: undefined,
    },
    { name: 'bad topology level', r: req({ gpus: 1 }, { topology: { level: 'rack', required: true } }), wantCode: 'invalid_topology' },
    { name: 'API shape: gpuModel as a string', r: req({ migProfile: '3g.71gb', gpuModel: 'H100-80GB' }), wantCode: 'mig_profile_not_on_model' },
    { name: 'API shape: gpuModel "*" means any', r: req({ gpus: 2, gpuModel: '*' }), wantCode: undefined },
    { name: 'zero replicas', r: req({ gpus: 1 }, { replicas: 0 }), wantCode: 'invalid_replicas' },
  ])('$name', ({ r, wantCode, wantMessage }) => {
    const v = validateRequest(r, inventory);
    expect(v.ok ? undefined : v.code).toBe(wantCode);
    if (!v.ok && wantMessage) expect(v.message).toMatch(wantMessage);
  });

  it('accepts a plain list of known models', () => {
    expect(validateRequest(req({ migProfile: '3g.40gb', gpuModels: ['H100-80GB'] }), ['H100-80GB'])).toEqual({ ok: true });
    expect(validateRequest(req({ gpus: 1, gpuModels: ['X'] }), ['H100-80GB'])).toMatchObject({ ok: false, code: 'unknown_gpu_model' });
  });
});
