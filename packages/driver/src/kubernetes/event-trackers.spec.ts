import type { V1Pod } from '@kubernetes/client-node';
import { xidMessage, type NodeLike } from './health-signals';
import { JobExitTracker } from './job-exit-tracker';
import { NodeHealthTracker } from './node-health-tracker';

const node = (extra: { ready?: boolean; conditions?: { type: string; status: string; message?: string }[] } = {}): NodeLike => ({
  metadata: { name: 'n1' },
  status: { conditions: [{ type: 'Ready', status: extra.ready === false ? 'False' : 'True' }, ...(extra.conditions ?? [])] },
});
const pod = (uid: string, phase: string, nodeName = 'n1', exitCode?: number): V1Pod => ({
  metadata: { uid, name: uid, labels: { 'gantry.io/job-id': 'j' } },
  spec: { nodeName, containers: [] },
  status: {
    phase,
    containerStatuses:
      exitCode === undefined ? [] : [{ name: 'w', image: '', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode } } }],
  },
});

describe('NodeHealthTracker', () => {
  it('learns the starting state silently, then reports each transition once', () => {
    const t = new NodeHealthTracker();
    expect(t.onNode({ type: 'ADDED', object: node({ ready: false }), initial: true }, 1)).toEqual([]);
    expect(t.onNode({ type: 'MODIFIED', object: node(), initial: false }, 2)).toEqual([{ type: 'node-up', nodeName: 'n1', at: 2 }]);
    expect(t.onNode({ type: 'MODIFIED', object: node(), initial: false }, 3)).toEqual([]);
    const xid = node({ conditions: [{ type: 'SysLogsXIDError', status: 'True', message: xidMessage(79, 2) }] });
    expect(t.onNode({ type: 'MODIFIED', object: xid, initial: false }, 4)).toEqual([{ type: 'xid', nodeName: 'n1', gpuIndex: 2, xid: 79, at: 4 }]);
    expect(t.onNode({ type: 'MODIFIED', object: xid, initial: false }, 5)).toEqual([]); // a relist of the same state
    const nicDown = node({ conditions: [{ type: 'NetworkUnavailable', status: 'True' }] });
    expect(t.onNode({ type: 'MODIFIED', object: nicDown, initial: false }, 6)).toEqual([{ type: 'nic-down', nodeName: 'n1', at: 6 }]);
    expect(t.onNode({ type: 'DELETED', object: nicDown, initial: false }, 7)).toEqual([{ type: 'node-down', nodeName: 'n1', at: 7 }]);
    expect(t.onNode({ type: 'ADDED', object: node(), initial: false }, 8)).toEqual([{ type: 'node-up', nodeName: 'n1', at: 8 }]);
  });
});

describe('JobExitTracker', () => {
  it('reports a run once, whether it ends by its pods or by its node', () => {
    const t = new JobExitTracker();
    expect(t.onJobPods('j', [pod('a', 'Running')], 1)).toEqual([]);
    const lost = t.onNodeLost('n1', new Map([['j', [pod('a', 'Running')]]]), 2);
    expect(lost).toEqual([{ type: 'job-exited', jobId: 'j', exitCode: 137, reason: 'node-lost', at: 2 }]);
    expect(t.onJobPods('j', [pod('a', 'Failed', 'n1', 137)], 3)).toEqual([]);
    expect(t.onJobPods('j', [pod('b', 'Succeeded', 'n2', 0)], 4)).toEqual([{ type: 'job-exited', jobId: 'j', exitCode: 0, reason: 'completed', at: 4 }]);
    expect(t.onJobPods('j', [pod('b', 'Succeeded', 'n2', 0)], 5)).toEqual([]);
  });

  it('ignores a lost node that runs none of the job', () => {
    const t = new JobExitTracker();
    expect(t.onNodeLost('n9', new Map([['j', [pod('a', 'Running')]]]), 1)).toEqual([]);
  });
});
