import { checkPlacements, type LockedState, type Placement } from './placement-batch';
import type { NewAllocation } from '../allocations/gpu-slots';

const whole = (gpuId: string, extra: Partial<NewAllocation> = {}): NewAllocation => ({
  replica: 0,
  nodeId: 'n1',
  gpuId,
  gpuModel: 'H100',
  milli: 1000,
  gpuUnits: 1,
  cpuMilli: 0,
  memoryMiB: 0,
  ...extra,
});
const share = (gpuId: string, milli: number, makeShared = true) => whole(gpuId, { milli, gpuUnits: milli / 1000, makeShared });

let seq = 0;
function placement(allocs: NewAllocation[], over: { teamId?: string; tenantId?: string; version?: number; guard?: Placement['guard'] } = {}): Placement {
  const id = `job${++seq}`;
  return { job: { id, tenantId: over.tenantId ?? 'ten1', teamId: over.teamId ?? 'team1', version: over.version ?? 0 }, allocs, summary: id, guard: over.guard };
}

function state(placements: Placement[], over: Partial<LockedState> = {}): LockedState {
  const gpuIds = new Set(placements.flatMap((p) => p.allocs.map((a) => a.gpuId)));
  return {
    pendingVersions: new Map(placements.map((p) => [p.job.id, 0])),
    gpus: new Map([...gpuIds].map((id) => [id, { mode: 'whole', schedulable: true, nodeReady: true }])),
    slices: new Set(),
    slots: new Set(),
    busy: new Map(),
    sharedMilli: new Map(),
    teamHeld: new Map(),
    tenantHeld: new Map(),
    ...over,
  };
}

describe('checkPlacements (the batched commit of a cycle)', () => {
  it('gives a whole GPU to the first placement of the batch only', () => {
    const ps = [placement([whole('g1')]), placement([whole('g1')]), placement([whole('g2')])];
    expect(checkPlacements(ps, state(ps)).accepted).toEqual([0, 2]);
  });

  it('refuses a slot another commit holds, and a GPU or node taken out of scheduling, each alone', () => {
    const ps = [placement([whole('g1')]), placement([whole('g2')]), placement([whole('g3')]), placement([whole('g4')])];
    const s = state(ps, { slots: new Set(['g1:whole']) });
    s.gpus.set('g2', { mode: 'whole', schedulable: false, nodeReady: true });
    s.gpus.set('g3', { mode: 'whole', schedulable: true, nodeReady: false });
    expect(checkPlacements(ps, s).accepted).toEqual([3]);
  });

  it('drops a job changed since the snapshot (version) or no longer pending, and commits the rest', () => {
    const ps = [placement([whole('g1')]), placement([whole('g2')]), placement([whole('g3')])];
    const s = state(ps);
    s.pendingVersions.set(ps[0]!.job.id, 1);
    s.pendingVersions.delete(ps[1]!.job.id);
    expect(checkPlacements(ps, s).accepted).toEqual([2]);
  });

  it('counts earlier placements of the batch against the team limit, per model and for *', () => {
    const guard = { limits: [{ gpuModel: 'H100', limit: 3 }], tenantTotal: null };
    const ps = [placement([whole('g1')], { guard }), placement([whole('g2'), whole('g3', { replica: 1 })], { guard }), placement([whole('g4')], { guard })];
    const s = state(ps, { teamHeld: new Map([['team1', new Map([['H100', 1]])]]) });
    // held 1: +1 = 2 fits, +2 = 4 does not, +1 = 3 fits
    expect(checkPlacements(ps, s).accepted).toEqual([0, 2]);
    const star = { limits: [{ gpuModel: '*', limit: 1 }], tenantTotal: null };
    const qs = [placement([whole('g5')], { guard: star }), placement([whole('g6', { gpuModel: 'A100' })], { guard: star })];
    expect(checkPlacements(qs, state(qs)).accepted).toEqual([0]);
  });

  it('keeps the tenant total across teams of the batch; a team without covering quota is refused', () => {
    const guard = (teamId: string) => ({ teamId, tenantId: 'ten1', guard: { limits: [{ gpuModel: '*', limit: 10 }], tenantTotal: 2 } });
    const ps = [placement([whole('g1')], guard('a')), placement([whole('g2')], guard('b')), placement([whole('g3')], guard('c'))];
    const s = state(ps, { tenantHeld: new Map([['ten1', 0.5]]) });
    expect(checkPlacements(ps, s).accepted).toEqual([0]);
    const none = [placement([whole('g9')], { guard: { limits: [], tenantTotal: null } })];
    expect(checkPlacements(none, state(none)).accepted).toEqual([]);
  });

  it('turns an idle whole GPU shared once, fills it up to 1000 thousandths, and refuses the share past it', () => {
    const ps = [placement([share('g1', 500)]), placement([share('g1', 400)]), placement([share('g1', 200)]), placement([share('g2', 500)])];
    const s = state(ps, { busy: new Map([['g2', 1]]) });
    const out = checkPlacements(ps, s);
    // g2 holds a whole allocation: it cannot become shared
    expect(out.accepted).toEqual([0, 1]);
    expect(out.makeShared).toEqual(['g1']);
  });

  it('takes a MIG slice only while the GPU is in MIG mode and the slice exists, once', () => {
    const mig = (gpuId: string, start: number) => whole(gpuId, { migProfile: '1g.10gb', migStart: start, gpuUnits: 1 / 7 });
    const ps = [placement([mig('g1', 0)]), placement([mig('g1', 0)]), placement([mig('g1', 1)]), placement([mig('g2', 0)])];
    const s = state(ps, { slices: new Set(['g1:1g.10gb@0', 'g2:1g.10gb@0']) });
    s.gpus.set('g1', { mode: 'mig', schedulable: true, nodeReady: true });
    // g1@1: no such slice; g2: not in MIG mode
    expect(checkPlacements(ps, s).accepted).toEqual([0]);
  });
});
