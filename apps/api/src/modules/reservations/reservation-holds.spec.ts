import { chooseHolds, type HeldWindow, type HoldNode } from './reservation-holds';

const node = (name: string, users: (null | { jobId: string; teamId: string; preemptible: boolean })[]): HoldNode => ({
  id: name,
  name,
  gpus: users.map((u, i) => ({ id: `${name}/${i}`, model: 'A100', usable: true, users: u ? [u] : [] })),
});
const win = (over: Partial<HeldWindow>): HeldWindow => ({
  reservationId: 'r1',
  name: 'r1',
  teamId: 'holder',
  gpuModel: 'A100',
  heldGpus: 4,
  wholeNodes: false,
  start: 0,
  end: 100,
  ...over,
});
const other = (jobId: string, preemptible: boolean) => ({ jobId, teamId: 'other', preemptible });

describe('chooseHolds', () => {
  it('takes free GPUs before preemptible work of others, and never non-preemptible work while it can', () => {
    const nodes = [
      node('n0', [other('fixed', false), other('fixed', false), null, null]),
      node('n1', [other('p1', true), other('p1', true), other('p1', true), other('p1', true)]),
      node('n2', [null, null, null, null]),
    ];
    const [h] = chooseHolds(nodes, [win({ heldGpus: 6 })], 50);
    expect([...h!.gpuIds].sort()).toEqual(['n0/2', 'n0/3', 'n2/0', 'n2/1', 'n2/2', 'n2/3']);
    expect(h!.active).toBe(true);
    expect(h!.victims).toEqual([]);
  });

  it('a window that must take busy GPUs lists the preemptible jobs as victims, keeps the holder’s own', () => {
    const nodes = [node('n0', [other('fixed', false), null]), node('n1', [other('p1', true), { jobId: 'mine', teamId: 'holder', preemptible: false }])];
    const [h] = chooseHolds(nodes, [win({ heldGpus: 3 })], 50);
    expect([...h!.gpuIds].sort()).toEqual(['n0/1', 'n1/0', 'n1/1']);
    expect(h!.victims).toEqual(['p1']);
    expect(h!.othersFixed).toEqual([]);
  });

  it('whole nodes: only nodes it can take whole, and two windows never share a GPU', () => {
    const nodes = [node('n0', [null, null]), node('n1', [null, null]), node('n2', [null, null])];
    const holds = chooseHolds(
      nodes,
      [win({ reservationId: 'a', heldGpus: 4, wholeNodes: true }), win({ reservationId: 'b', teamId: 't2', heldGpus: 2, start: 200, end: 300 })],
      50,
    );
    const [a, b] = holds;
    expect(a!.gpuIds.size).toBe(4);
    expect(b!.gpuIds.size).toBe(2);
    expect([...a!.gpuIds].some((g) => b!.gpuIds.has(g))).toBe(false);
    expect(b!.active).toBe(false);
  });
});
