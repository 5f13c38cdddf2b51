import { admit, type AdmissionJob, type TeamQuota } from './quota-admission';

const job = (id: string, teamId: string, units: number, gpuModel?: string): AdmissionJob => ({ id, teamId, units, gpuModel });

describe('admit (quota admission)', () => {
  it.each([
    {
      name: 'admits jobs within the limit and holds the one that would pass it',
      jobs: [job('a', 't1', 4), job('b', 't1', 4), job('c', 't1', 1)],
      usage: [{ teamId: 't1', gpuModel: 'H100-80GB', units: 1 }],
      quotas: [{ teamId: 't1', gpuModel: '*', limit: 8 }],
      wantAdmitted: ['a', 'c'],
      wantHeld: ['b'],
    },
    {
      name: 'a model-specific quota row wins over the * row',
      jobs: [job('a', 't1', 2, 'A100-80GB'), job('b', 't1', 2, 'A100-80GB')],
      usage: [],
      quotas: [
        { teamId: 't1', gpuModel: '*', limit: 100 },
        { teamId: 't1', gpuModel: 'A100-80GB', limit: 3 },
      ],
      wantAdmitted: ['a'],
      wantHeld: ['b'],
    },
    {
      name: 'a team without a quota row gets nothing (deny by default)',
      jobs: [job('a', 't2', 1)],
      usage: [],
      quotas: [{ teamId: 't1', gpuModel: '*', limit: 1 }],
      wantAdmitted: [],
      wantHeld: ['a'],
    },
    {
      name: 'fractional units (MIG slices and shares) add up exactly to the limit',
      jobs: [job('a', 't1', 3 / 7), job('b', 't1', 4 / 7), job('c', 't1', 0.001)],
      usage: [],
      quotas: [{ teamId: 't1', gpuModel: '*', limit: 1 }],
      wantAdmitted: ['a', 'b'],
      wantHeld: ['c'],
    },
  ])('$name', ({ jobs, usage, quotas, wantAdmitted, wantHeld }) => {
    const r = admit(jobs, usage, quotas as TeamQuota[]);
    expect(r.admitted.map((j) => j.id)).toEqual(wantAdmitted);
    expect(r.held.map((h) => h.jobId)).toEqual(wantHeld);
  });

  it('says how much of the quota is in use in the reason', () => {
    const r = admit([job('a', 't1', 8)], [{ teamId: 't1', gpuModel: 'H100-80GB', units: 30 }], [{ teamId: 't1', gpuModel: '*', limit: 32 }]);
    expect(r.held[0]!.reasons[0]).toEqual({ code: 'quota_limit', message: 'team quota for all GPU models: 30/32 GPUs in use; this job needs 8' });
  });

  it('tells what the team holds from what the queue admitted ahead of the job (never counts queued work as in use)', () => {
    const r = admit([job('a', 't1', 8), job('b', 't1', 8)], [{ teamId: 't1', gpuModel: 'H100-80GB', units: 20 }], [{ teamId: 't1', gpuModel: '*', limit: 32 }]);
    expect(r.admitted.map((j) => j.id)).toEqual(['a']);
    expect(r.held[0]!.reasons[0]!.message).toBe('team quota for all GPU models: 20/32 GPUs in use and 8 admitted ahead of this job; this job needs 8');
  });
});
