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
  const api = { podInformerSource: () => source('gantry'), nodeInformerSource: () => source('nodes'), activePodInformerSource: () => source('active') };
  return { api: api as unknown as KubeApi, emitters };
}

const pod = (name: string, nodeName: string): V1Pod => ({ metadata: { name, namespace: 'gantry', resourceVersion: '2' }, spec: { nodeName, containers: [] } });
const names = (pods: V1Pod[]) => pods.map((p) => p.metadata?.name).sort();

describe('ClusterView: the pods bound to a node', () => {
  let view: ClusterView;
  let emitters: ReturnType<typeof fakeApi>['emitters'];

  beforeEach(async () => {
    const fake = fakeApi();
    emitters = fake.emitters;
    view = new ClusterView({ api: fake.api, namespace: 'gantry' });
    await view.synced();
    await waitFor('the active-pods watch', () => emitters.active !== undefined, 2000);
  });

  afterEach(() => view.stop());

  it('counts a pod the driver is creating from before its create until forgotten', () => {
    view.assume(pod('a', 'n1'));
    expect(names(view.activePodsOn('n1'))).toEqual(['a']);
    expect(view.activePodsOn('n2')).toEqual([]);
    view.forget(pod('a', 'n1'));
    expect(view.activePodsOn('n1')).toEqual([]);
  });

  it('counts it once the watch shows it: from the watch, not twice', () => {
    view.assume(pod('a', 'n1'));
    emitters.active!('ADDED', pod('b', 'n1')); // someone else's pod
    expect(names(view.activePodsOn('n1'))).toEqual(['a', 'b']);
    emitters.active!('ADDED', pod('a', 'n1'));
    expect(names(view.activePodsOn('n1'))).toEqual(['a', 'b']);
    emitters.active!('DELETED', pod('a', 'n1')); // finished: no longer holds the node's GPUs
    expect(names(view.activePodsOn('n1'))).toEqual(['b']);
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
