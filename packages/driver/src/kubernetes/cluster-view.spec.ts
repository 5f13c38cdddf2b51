import type { V1Pod } from '@kubernetes/client-node';
import { ASSUMED_POD_TTL_MS, ClusterView } from './cluster-view';
import type { InformerSource } from './informer';
import type { KubeApi } from './kube-api';
import { waitFor } from './__tests__/wait-for';

/** Informer sources that list nothing and hand the test a function emitting watch events. */
function fakeApi() {
  const emitters: Record<string, (type: string, o: unknown) => void> = {};
  const source = (what: string): InformerSource<never> => ({
    list: async () => ({ items: [], resourceVersion: '1' }),
    watch: async (_rv, _t, onEvent) => {
      emitters[what] = onEvent;
      return () => undefined;
    },
  });
  const api = {
    podInformerSource: () => source('gantry'),
    nodeInformerSource: () => source('nodes'),
    // others' pods (without Gantry's label), and pods carrying it outside Gantry's namespace
    activePodInformerSource: (s: { notInNamespace?: string }) => source(s.notInNamespace ? 'stray' : 'other'),
  };
  return { api: api as unknown as KubeApi, emitters };
}

const pod = (name: string, nodeName: string, phase = 'Pending', namespace = 'gantry'): V1Pod => ({
  metadata: { name, namespace, resourceVersion: '2', labels: { 'gantry.io/job-id': name } },
  spec: { nodeName, containers: [] },
  status: { phase },
});
const othersPod = (name: string, nodeName: string): V1Pod => ({
  metadata: { name, namespace: 'ml', resourceVersion: '2' },
  spec: { nodeName, containers: [] },
});
const names = (pods: V1Pod[]) => pods.map((p) => p.metadata?.name).sort();

describe('ClusterView: the pods bound to a node', () => {
  let view: ClusterView;
  let emitters: ReturnType<typeof fakeApi>['emitters'];

  beforeEach(async () => {
    const fake = fakeApi();
    emitters = fake.emitters;
    view = new ClusterView({ api: fake.api, namespace: 'gantry' });
    await view.synced();
    await waitFor('the pod watches', () => !!emitters.gantry && !!emitters.other && !!emitters.stray, 2000);
  });

  afterEach(() => view.stop());

  it('counts a pod the driver is creating from before its create until forgotten', () => {
    view.assume(pod('a', 'n1'));
    expect(names(view.activePodsOn('n1'))).toEqual(['a']);
    expect(view.activePodsOn('n2')).toEqual([]);
    view.forget(pod('a', 'n1'));
    expect(view.activePodsOn('n1')).toEqual([]);
  });

  it("counts it once Gantry's pods watch shows it: from the watch, not twice; until it finishes", () => {
    view.assume(pod('a', 'n1'));
    emitters.other!('ADDED', othersPod('b', 'n1')); // someone else's pod
    expect(names(view.activePodsOn('n1'))).toEqual(['a', 'b']);
    emitters.gantry!('ADDED', pod('a', 'n1'));
    expect(names(view.activePodsOn('n1'))).toEqual(['a', 'b']);
    emitters.gantry!('MODIFIED', pod('a', 'n1', 'Running'));
    expect(names(view.activePodsOn('n1'))).toEqual(['a', 'b']);
    emitters.gantry!('MODIFIED', pod('a', 'n1', 'Succeeded')); // finished: no longer holds the node's GPUs
    expect(names(view.activePodsOn('n1'))).toEqual(['b']);
    expect(view.podsOfJob('a').map((p) => p.status?.phase)).toEqual(['Succeeded']); // still the job's, for its exit
    emitters.other!('DELETED', othersPod('b', 'n1'));
    expect(view.activePodsOn('n1')).toEqual([]);
  });

  it("counts a pod carrying Gantry's label outside its namespace (not one Gantry runs) as holding its node's GPUs", () => {
    emitters.stray!('ADDED', pod('copied', 'n2', 'Running', 'elsewhere'));
    expect(names(view.activePodsOn('n2'))).toEqual(['copied']);
    expect(view.podsOfJob('copied')).toEqual([]);
  });

  it('stops counting an assumed pod the watch never showed after a while', () => {
    const now = Date.now();
    const clock = jest.spyOn(Date, 'now').mockReturnValue(now);
    try {
      view.assume(pod('a', 'n1'));
      clock.mockReturnValue(now + ASSUMED_POD_TTL_MS - 1);
      expect(names(view.activePodsOn('n1'))).toEqual(['a']);
      clock.mockReturnValue(now + ASSUMED_POD_TTL_MS + 1);
      expect(view.activePodsOn('n1')).toEqual([]);
    } finally {
      clock.mockRestore();
    }
  });
});
