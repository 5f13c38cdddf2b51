import { nodeHealthOf, parseXidMessage, xidMessage, xidsOfEvent, type NodeLike } from './health-signals';

const node = (conditions: { type: string; status: string; message?: string }[], taints: { key: string; effect?: string }[] = []): NodeLike => ({
  metadata: { name: 'n' },
  spec: { taints },
  status: { conditions: [{ type: 'Ready', status: 'True' }, ...conditions] },
});

describe('health signals', () => {
  it.each([
    {
      name: 'NVSentinel syslog Xid',
      message: 'ErrorCode:79 GPU:3 GPU has fallen off the bus Recommended Action=RESTART_BM;',
      want: [{ gpuIndex: 3, xid: 79 }],
    },
    { name: 'lower-case gpu entity', message: 'ErrorCode:79 gpu:0 XID error occured Recommended Action=NODE_REBOOT;', want: [{ gpuIndex: 0, xid: 79 }] },
    {
      name: 'two codes on one GPU',
      message: 'ErrorCode:48 ErrorCode:63 GPU:2',
      want: [
        { gpuIndex: 2, xid: 48 },
        { gpuIndex: 2, xid: 63 },
      ],
    },
    {
      name: 'two GPUs, one entry each',
      message: 'ErrorCode:79 GPU:3 PCI:0000:5d:00 Recommended Action=RESTART_BM; ErrorCode:48 GPU:5 PCI:0000:ab:00 Recommended Action=RESET_GPU;',
      want: [
        { gpuIndex: 3, xid: 79 },
        { gpuIndex: 5, xid: 48 },
      ],
    },
    { name: 'no GPU index: nothing to quarantine', message: 'ErrorCode:79 GPU_UUID:GPU-abc', want: [] },
    { name: 'no code', message: 'GPU:1 something', want: [] },
    { name: 'the builder', message: xidMessage(94, 5), want: [{ gpuIndex: 5, xid: 94 }] },
  ])('reads an Xid message: $name', ({ message, want }) => {
    expect(parseXidMessage(message)).toEqual(want);
  });

  it.each([
    { name: 'healthy', node: node([]), want: { ready: true, networkUp: true, xids: [] } },
    { name: 'Ready False', node: { status: { conditions: [{ type: 'Ready', status: 'False' }] } }, want: { ready: false, networkUp: true, xids: [] } },
    { name: 'Ready Unknown', node: { status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } }, want: { ready: false, networkUp: true, xids: [] } },
    {
      name: 'unreachable taint',
      node: node([], [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }]),
      want: { ready: false, networkUp: true, xids: [] },
    },
    { name: 'NetworkUnavailable', node: node([{ type: 'NetworkUnavailable', status: 'True' }]), want: { ready: true, networkUp: false, xids: [] } },
    { name: 'InfiniBand port down', node: node([{ type: 'InfiniBandStateCheck', status: 'True' }]), want: { ready: true, networkUp: false, xids: [] } },
    { name: 'InfiniBand recovered', node: node([{ type: 'InfiniBandStateCheck', status: 'False' }]), want: { ready: true, networkUp: true, xids: [] } },
    {
      name: 'network-unavailable taint',
      node: node([], [{ key: 'node.kubernetes.io/network-unavailable' }]),
      want: { ready: true, networkUp: false, xids: [] },
    },
    {
      name: 'Xid condition',
      node: node([{ type: 'SysLogsXIDError', status: 'True', message: xidMessage(79, 3) }]),
      want: { ready: true, networkUp: true, xids: [{ gpuIndex: 3, xid: 79 }] },
    },
    {
      name: 'Xid condition cleared',
      node: node([{ type: 'SysLogsXIDError', status: 'False', message: xidMessage(79, 3) }]),
      want: { ready: true, networkUp: true, xids: [] },
    },
    {
      name: 'fallen off the bus',
      node: node([{ type: 'SysLogsGPUFallenOff', status: 'True', message: 'GPU:6 fell off' }]),
      want: { ready: true, networkUp: true, xids: [{ gpuIndex: 6, xid: 79 }] },
    },
  ])('reads a node: $name', ({ node: n, want }) => {
    expect(nodeHealthOf(n)).toEqual(want);
  });

  it.each([
    {
      name: 'by reason',
      event: { involvedObject: { kind: 'Node', name: 'n' }, reason: 'SysLogsXIDError', message: xidMessage(13, 1) },
      want: [{ gpuIndex: 1, xid: 13 }],
    },
    {
      name: 'by type, as NVSentinel posts non-fatal ones',
      event: { involvedObject: { kind: 'Node' }, type: 'GpuXidError', reason: 'Warning', message: xidMessage(31, 0) },
      want: [{ gpuIndex: 0, xid: 31 }],
    },
    { name: 'about a pod', event: { involvedObject: { kind: 'Pod' }, reason: 'SysLogsXIDError', message: xidMessage(13, 1) }, want: [] },
    { name: 'another reason', event: { involvedObject: { kind: 'Node' }, reason: 'NodeNotReady', message: xidMessage(13, 1) }, want: [] },
  ])('reads a node event: $name', ({ event, want }) => {
    expect(xidsOfEvent(event)).toEqual(want);
  });
});
