import { admit, type AdmissionContext, type AdmissionJob, type TeamQuota } from './quota-admission';

const job = (id: string, teamId: string, units: number, opts: Partial<AdmissionJob> = {}): AdmissionJob => ({
  id,
  teamId,
  units,
  canBorrow: true,
  preemptible: true,
  ...opts,
});
const q = (teamId: string, guaranteed: number, limit: number, gpuModel = '*'): TeamQuota => ({ teamId, gpuModel, guaranteed, limit });
const cohort = (tenants: Record<string, string[]>, totals: Record<string, number | null> = {}): AdmissionContext => ({
  tenantOf: new Map(Object.entries(tenants).flatMap(([tenant, teams]) => teams.map((t) => [t, tenant] as [string, string]))),
  tenantTotals: new Map(Object.keys(tenants).map((t) => [t, totals[t] ?? null])),
});

describe('admit: guaranteed, borrowing in the tenant pool, limits (Kueue cohort semantics)', () => {
  it.each([
    {
      name: 'admits within guaranteed without borrowing',
      jobs: [job('a', 'A', 4)],
      usage: [],
      quotas: [q('A', 8, 16), q('B', 8, 16)],
      ctx: cohort({ t: ['A', 'B'] }),
      wantAdmitted: ['a'],
      wantBorrowing: [],
      wantHeld: {},
    },
    {
      name: 'borrows the idle guaranteed GPUs of a sibling team up to the limit',
      jobs: [job('a', 'A', 8), job('b', 'A', 6)],
      usage: [{ teamId: 'A', gpuModel: 'H100-80GB', units: 2 }],
      quotas: [q('A', 8, 16), q('B', 8, 16)],
      ctx: cohort({ t: ['A', 'B'] }),
      wantAdmitted: ['a', 'b'],
      // b fits the 6 guaranteed GPUs left, so it is admitted first; a borrows.
      wantBorrowing: ['a'],
      wantHeld: {},
    },
    {
      name: 'a requeued borrower never takes back what a lender within its guaranteed quota reclaims',
      jobs: [job('a-requeued', 'A', 8), job('b-lender', 'B', 8)],
      usage: [{ teamId: 'A', gpuModel: 'H100-80GB', units: 8 }],
      quotas: [q('A', 8, 16), q('B', 8, 16)],
      ctx: cohort({ t: ['A', 'B'] }, { t: 16 }),
      wantAdmitted: ['b-lender'],
      wantBorrowing: [],
      wantHeld: { 'a-requeued': 'cohort_exhausted' },
    },
    {
      name: 'never borrows past the limit',
      jobs: [job('a', 'A', 10)],
      usage: [{ teamId: 'A', gpuModel: 'H100-80GB', units: 8 }],
      quotas: [q('A', 8, 16), q('B', 8, 16)],
      ctx: cohort({ t: ['A', 'B'] }),
      wantAdmitted: [],
      wantBorrowing: [],
      wantHeld: { a: 'quota_limit' },
    },
    {
      name: 'cannot borrow what the sibling uses itself (the pool, the tenant total, is exhausted)',
      jobs: [job('a', 'A', 4)],
      usage: [
        { teamId: 'A', gpuModel: 'H100-80GB', units: 8 },
        { teamId: 'B', gpuModel: 'H100-80GB', units: 6 },
      ],
      quotas: [q('A', 8, 16), q('B', 8, 16)],
      ctx: cohort({ t: ['A', 'B'] }, { t: 16 }),
      wantAdmitted: [],
      wantBorrowing: [],
      wantHeld: { a: 'cohort_exhausted' },
    },
    {
      name: 'a team within guaranteed is admitted even when borrowers fill the pool (it reclaims)',
      jobs: [job('b', 'B', 8)],
      usage: [{ teamId: 'A', gpuModel: 'H100-80GB', units: 16 }],
      quotas: [q('A', 8, 16), q('B', 8, 16)],
      ctx: cohort({ t: ['A', 'B'] }),
      wantAdmitted: ['b'],
      wantBorrowing: [],
      wantHeld: {},
    },
    {
      name: 'a tenant without a total borrows what the cluster has idle (the engine decides what fits)',
      jobs: [job('a', 'A', 8)],
      usage: [
        { teamId: 'A', gpuModel: 'H100-80GB', units: 8 },
        { teamId: 'B', gpuModel: 'H100-80GB', units: 8 },
      ],
      quotas: [q('A', 8, 16), q('B', 8, 16)],
      ctx: cohort({ t: ['A', 'B'] }),
      wantAdmitted: ['a'],
      wantBorrowing: ['a'],
      wantHeld: {},
    },
    {
      name: 'non-preemptible or critical work stays within guaranteed (KAI)',
      jobs: [job('a', 'A', 6, { canBorrow: false }), job('c', 'A', 3, { canBorrow: false })],
      usage: [],
      quotas: [q('A', 8, 16), q('B', 8, 16)],
      ctx: cohort({ t: ['A', 'B'] }),
      wantAdmitted: ['a'],
      wantBorrowing: [],
      wantHeld: { c: 'borrow_not_allowed' },
    },
    {
      name: 'teams of another tenant lend nothing',
      jobs: [job('a', 'A', 4)],
      usage: [{ teamId: 'A', gpuModel: 'H100-80GB', units: 8 }],
      quotas: [q('A', 8, 16), q('X', 64, 64)],
      ctx: cohort({ t: ['A'], u: ['X'] }, { t: 8, u: 64 }),
      wantAdmitted: [],
      wantBorrowing: [],
      wantHeld: { a: 'cohort_exhausted' },
    },
    {
      name: 'a tenant total above the guaranteed sum is borrowable pool; the total itself is never passed',
      jobs: [job('a', 'A', 8), job('b', 'A', 5)],
      usage: [{ teamId: 'A', gpuModel: 'H100-80GB', units: 8 }],
      quotas: [q('A', 8, 32)],
      ctx: cohort({ t: ['A'] }, { t: 20 }),
      wantAdmitted: ['a'],
      wantBorrowing: ['a'],
      wantHeld: { b: 'cohort_exhausted' },
    },
    {
      name: 'the * row bounds the team total while a model row bounds its model',
      jobs: [job('a', 'A', 4, { gpuModel: 'A100-80GB' }), job('b', 'A', 4, { gpuModel: 'H100-80GB' })],
      usage: [{ teamId: 'A', gpuModel: 'H100-80GB', units: 4 }],
      quotas: [q('A', 10, 10), q('A', 2, 2, 'A100-80GB')],
      ctx: cohort({ t: ['A'] }),
      wantAdmitted: ['b'],
      wantBorrowing: [],
      wantHeld: { a: 'quota_limit' },
    },
  ])('$name', ({ jobs, usage, quotas, ctx, wantAdmitted, wantBorrowing, wantHeld }) => {
    const r = admit(jobs, usage, quotas, ctx);
    expect(r.admitted.map((j) => j.id)).toEqual(wantAdmitted);
    expect([...r.borrowing]).toEqual(wantBorrowing);
    expect(Object.fromEntries(r.held.map((h) => [h.jobId, h.rule]))).toEqual(wantHeld);
  });

  it.each([
    { name: 'block: nothing is admitted', policy: 'block' as const, wantAdmitted: [] },
    { name: 'preemptible-only: only preemptible work is admitted', policy: 'preemptible-only' as const, wantAdmitted: ['p'] },
  ])('a spent GPU-hour budget, $name', ({ policy, wantAdmitted }) => {
    const ctx: AdmissionContext = { budgets: new Map([['A', { exhausted: true, policy, gpuHours: 101, budget: 100 }]]) };
    const r = admit([job('p', 'A', 1), job('n', 'A', 1, { preemptible: false, canBorrow: false })], [], [q('A', 8, 8)], ctx);
    expect(r.admitted.map((j) => j.id)).toEqual(wantAdmitted);
    expect(r.held.every((h) => h.rule === 'budget_exhausted')).toBe(true);
    expect(r.held[0]!.reasons[0]!.message).toContain('101/100 GPU-hours');
  });

  it('names the pool in the reason of a job that cannot borrow', () => {
    const r = admit(
      [job('a', 'A', 4)],
      [
        { teamId: 'A', gpuModel: 'x', units: 8 },
        { teamId: 'B', gpuModel: 'x', units: 6 },
      ],
      [q('A', 8, 16), q('B', 8, 16)],
      cohort({ t: ['A', 'B'] }, { t: 16 }),
    );
    expect(r.held[0]!.reasons[0]!.message).toBe("borrowing: team at 8/8 guaranteed GPUs; the tenant's pool has 2 idle, this job needs 4");
  });
});
