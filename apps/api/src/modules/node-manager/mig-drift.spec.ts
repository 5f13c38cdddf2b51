import { findMigDrift, type DbGpuLayout } from './mig-drift';

const gpu = (over: Partial<DbGpuLayout> = {}): DbGpuLayout => ({
  gpuId: 'g4',
  nodeName: 'h100-n0',
  index: 4,
  model: 'H100-80GB',
  migCapable: true,
  vmNode: false,
  mode: 'mig',
  layout: [{ profile: '1g.10gb', start: 6 }],
  changing: false,
  ...over,
});
const onCluster = (layout: { profile: string; start: number }[]) => [{ nodeName: 'h100-n0', index: 4, layout }];

describe('findMigDrift', () => {
  it.each([
    { name: 'same layout: nothing', db: gpu(), cluster: onCluster([{ profile: '1g.10gb', start: 6 }]), want: [] },
    { name: 'whole on both sides: nothing', db: gpu({ mode: 'whole', layout: [] }), cluster: onCluster([]), want: [] },
    {
      name: 'a restarted cluster lost the layout: re-applied',
      db: gpu(),
      cluster: onCluster([]),
      want: [{ action: 'reapply', existing: [], wanted: [{ profile: '1g.10gb', start: 6 }] }],
    },
    {
      name: 'slices made outside Gantry on a whole GPU: MIG off re-applied',
      db: gpu({ mode: 'whole', layout: [] }),
      cluster: onCluster([{ profile: '7g.80gb', start: 0 }]),
      want: [{ action: 'reapply', existing: [{ profile: '7g.80gb', start: 0 }], wanted: [] }],
    },
    { name: 'a change in flight is the MIG manager’s', db: gpu({ changing: true }), cluster: onCluster([]), want: [] },
    { name: 'a GPU the cluster does not report is failover’s', db: gpu(), cluster: [], want: [] },
    {
      name: 'a node running VMs: the cluster’s layout is adopted',
      db: gpu({ vmNode: true }),
      cluster: onCluster([]),
      want: [{ action: 'adopt', existing: [], wanted: [{ profile: '1g.10gb', start: 6 }] }],
    },
    {
      name: 'a wanted layout invalid on the model: adopted',
      db: gpu({ layout: [{ profile: '3g.40gb', start: 2 }] }),
      cluster: onCluster([]),
      want: [{ action: 'adopt' }],
    },
  ])('$name', ({ db, cluster, want }) => {
    expect(findMigDrift([db], cluster)).toMatchObject(want);
  });
});
