import type { NodeRow } from '../cluster/cluster.repository';
import { WhatIfNodes } from './what-if-nodes';

const node = (id: string, leaf: string, spine: string, jobs: string[] = []) =>
  ({ id, leaf: { name: leaf, spine: { name: spine } }, gpus: [{ allocations: jobs.map((jobId) => ({ jobId })) }, { allocations: [] }] }) as unknown as NodeRow;

const nodes = [
  node('a1', 'leaf-a', 's0', ['j1']),
  node('a2', 'leaf-a', 's0'),
  node('b1', 'leaf-b', 's0', ['j2', 'j3']),
  node('c1', 'leaf-c', 's1', ['j3']),
  node('c2', 'leaf-c', 's1'),
];
const whatIf = new WhatIfNodes(nodes);
const holders = whatIf.holders;
const ids = (rows: readonly NodeRow[]) => rows.map((n) => n.id);

describe('preemption what-if nodes', () => {
  it('knows on which nodes each job holds GPUs', () => {
    expect([...holders.get('j3')!].sort()).toEqual(['b1', 'c1']);
    expect(holders.has('nobody')).toBe(false);
  });

  it('one replica: only the nodes the victims leave', () => {
    const one = { replicas: 1, topologyLevel: 'any', topologyRequired: false };
    expect(ids(whatIf.of(['j1'], one))).toEqual(['a1']);
    expect(ids(whatIf.of(['j3'], one))).toEqual(['b1', 'c1']);
    expect(ids(whatIf.of([], one))).toEqual([]);
    expect(ids(whatIf.of(['j3', 'j1'], one))).toEqual(['a1', 'b1', 'c1']); // the cluster's order, whatever the victims' order
    expect(ids(whatIf.of(['j1'], { replicas: 2, topologyLevel: 'node', topologyRequired: true }))).toEqual(['a1']);
  });

  it('a gang bound to a leaf or a spine: the leaves or spines of those nodes; any other gang: the whole cluster', () => {
    expect(ids(whatIf.of(['j1'], { replicas: 2, topologyLevel: 'leaf', topologyRequired: true }))).toEqual(['a1', 'a2']);
    expect(ids(whatIf.of(['j2'], { replicas: 2, topologyLevel: 'spine', topologyRequired: true }))).toEqual(['a1', 'a2', 'b1']);
    expect(ids(whatIf.of(['j1'], { replicas: 2, topologyLevel: 'leaf', topologyRequired: false }))).toEqual(ids(nodes));
    expect(ids(whatIf.of(['j1'], { replicas: 2, topologyLevel: 'any', topologyRequired: true }))).toEqual(ids(nodes));
  });
});
