import { planPreemption, type PreemptionInput, type RunningJob } from './preemption';

const run = (id: string, teamId: string, units: number, priority = 50, startedAtMs = 0, preemptible = true): RunningJob => ({
  id,
  teamId,
  units,
  priority,
  startedAtMs,
  preemptible,
});

/** A cluster of `capacity` interchangeable GPUs: the job fits when enough are free. */
function fits(capacity: number, running: RunningJob[], need: number) {
  return (without: Set<string>) => capacity - running.filter((r) => !without.has(r.id)).reduce((s, r) => s + r.units, 0) >= need;
}

describe('planPreemption (reclaim from borrowers, lower priority within a team)', () => {
  const base = (over: Partial<PreemptionInput> & { need: number; running: RunningJob[] }): PreemptionInput => ({
    job: { id: 'new', teamId: 'B', priority: 50, withinGuaranteed: true, teamExcess: 0 },
    borrowerTeams: new Set(['A']),
    freeing: [],
    canPlace: fits(16, over.running, over.need),
    ...over,
  });

  it.each([
    {
      name: 'reclaims from the newest borrower first, only as much as needed',
      input: base({ need: 4, running: [run('a1', 'A', 4, 50, 1), run('a2', 'A', 4, 50, 2), run('a3', 'A', 8, 50, 0)] }),
      wantKind: 'preempt',
      wantVictims: ['a2'],
    },
    {
      name: 'takes the lowest priority borrower before a newer normal one',
      input: base({ need: 4, running: [run('low', 'A', 4, 10, 1), run('new', 'A', 4, 50, 9), run('x', 'A', 8, 50, 0)] }),
      wantKind: 'preempt',
      wantVictims: ['low'],
    },
    {
      name: 'never touches non-preemptible jobs',
      input: base({ need: 4, running: [run('a1', 'A', 16, 50, 1, false)] }),
      wantKind: 'none',
      wantVictims: [],
    },
    {
      name: 'does not reclaim when the job itself would borrow',
      input: base({ job: { id: 'new', teamId: 'B', priority: 50, withinGuaranteed: false, teamExcess: 0 }, need: 4, running: [run('a1', 'A', 16)] }),
      wantKind: 'none',
      wantVictims: [],
    },
    {
      name: 'does not take from teams within their guaranteed quota',
      input: base({ borrowerTeams: new Set(), need: 4, running: [run('a1', 'A', 16)] }),
      wantKind: 'none',
      wantVictims: [],
    },
    {
      name: 'preempts lower priority of its own team, never equal or higher',
      input: base({
        job: { id: 'new', teamId: 'B', priority: 100, withinGuaranteed: false, teamExcess: 0 },
        borrowerTeams: new Set(),
        need: 8,
        running: [run('b-high', 'B', 8, 100), run('b-low', 'B', 8, 10)],
      }),
      wantKind: 'preempt',
      wantVictims: ['b-low'],
    },
    {
      name: 'frees enough of its own team to fit the team limit',
      input: base({
        job: { id: 'new', teamId: 'B', priority: 100, withinGuaranteed: false, teamExcess: 6 },
        borrowerTeams: new Set(),
        need: 0,
        running: [run('b1', 'B', 4, 10, 1), run('b2', 'B', 4, 10, 2), run('b3', 'B', 4, 10, 3)],
      }),
      wantKind: 'preempt',
      wantVictims: ['b3', 'b2'],
    },
    {
      name: 'waits while earlier victims release their GPUs instead of preempting more',
      input: base({ freeing: [run('a1', 'A', 4)], need: 4, running: [run('a1', 'A', 4), run('a2', 'A', 12)] }),
      wantKind: 'wait',
      wantVictims: [],
    },
    {
      name: 'gives the tenant total back from borrowers of the same tenant only',
      input: base({
        job: { id: 'new', teamId: 'B', tenantId: 't', priority: 50, withinGuaranteed: true, teamExcess: 0, tenantExcess: 4 },
        borrowerTeams: new Set(['A', 'X']),
        need: 0,
        running: [run('x1', 'X', 4, 10, 9), run('a1', 'A', 4, 50, 1)].map((r) => ({ ...r, tenantId: r.teamId === 'X' ? 'u' : 't' })),
      }),
      wantKind: 'preempt',
      wantVictims: ['a1'],
    },
    {
      name: 'counts GPUs already being given back before choosing more victims',
      input: base({
        job: { id: 'new', teamId: 'B', priority: 100, withinGuaranteed: false, teamExcess: 4 },
        borrowerTeams: new Set(),
        freeing: [run('b0', 'B', 4, 10)],
        need: 0,
        running: [run('b1', 'B', 4, 10)],
      }),
      wantKind: 'wait',
      wantVictims: [],
    },
    {
      // the snapshot still shows b0's 8 GPUs taken: b0 was requeued (or ended) after it was read
      name: 'preempts nobody for room a job let go of since the snapshot was read',
      input: {
        ...base({ need: 8, running: [run('b1', 'B', 8, 10)] }),
        job: { id: 'new', teamId: 'B', priority: 100, withinGuaranteed: false, teamExcess: 0 },
        released: ['b0'],
        canPlace: fits(16, [run('b0', 'B', 8, 10), run('b1', 'B', 8, 10)], 8),
      },
      wantKind: 'wait',
      wantVictims: [],
    },
  ])('$name', ({ input, wantKind, wantVictims }) => {
    const plan = planPreemption(input);
    expect(plan.kind).toBe(wantKind);
    expect(plan.kind === 'preempt' ? plan.victims.map((v) => v.job.id) : []).toEqual(wantVictims);
  });
});
