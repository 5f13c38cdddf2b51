/**
 * Against a real kube-apiserver: faults injected through the control API reach Kubernetes as a
 * health monitor reports them (conditions, taints, Events), act on the pods and the allocatable
 * GPUs, and recovery clears them.
 */
import { KubernetesDriver, kubernetesHealthSignals, kubernetesSpecs } from '@gantry/driver';
import type { V1Node } from '@kubernetes/client-node';
import type { Emulator } from './emulator';
import { emulatorOn, ensureNamespace, eventually, smallTopology, startCluster, teardown, type Cluster } from './__tests__/harness';
import { NODE_LEASE_NAMESPACE } from './cluster/node-objects';
import { NIC_CONDITION, TAINTS, XID_CONDITION, XID_EVENT_REASON } from './health/fault-reports';
import { BURN_IN_FAILED_EVENT_REASON } from './kubelet/burn-in-findings';

const { nodeHealthOf, xidsOfEvent } = kubernetesHealthSignals;
const { workloadStatusFromPods } = kubernetesSpecs;

const { replicaPod } = kubernetesSpecs;

let cluster: Cluster | undefined;
let emulator: Emulator | undefined;

beforeAll(async () => {
  cluster = await startCluster();
  emulator = await emulatorOn(cluster, { topology: smallTopology(2, 8) });
  await ensureNamespace(cluster.core, 'gantry');
});

afterAll(() => teardown([emulator], cluster));

const node = (name: string) => cluster!.core.readNode({ name });
const condition = (n: V1Node, type: string) => n.status?.conditions?.find((c) => c.type === type);
const taintKeys = (n: V1Node) => (n.spec?.taints ?? []).map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`).sort();

async function postFault(body: unknown): Promise<Response> {
  return fetch(`${emulator!.controlUrl}/v1/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

async function nodeEvents(nodeName: string, reason: string) {
  const events = await cluster!.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${nodeName},reason=${reason}` });
  return events.items;
}

async function runPodOn(jobId: string, nodeName: string, gpuIndex: number): Promise<string> {
  const replica = { replica: 0, nodeName, gpus: [{ index: gpuIndex }] };
  const body = replicaPod({ request: { jobId, kind: 'training', replicas: [replica] }, replica, namespace: 'gantry', defaultImage: 'busybox' });
  await cluster!.core.createNamespacedPod({ namespace: 'gantry', body });
  const name = body.metadata!.name!;
  await eventually(`${name} running`, async () =>
    (await cluster!.core.readNamespacedPod({ namespace: 'gantry', name })).status?.phase === 'Running' ? true : undefined,
  );
  return name;
}

describe('faults', () => {
  it('a fatal Xid: a SysLogsXIDError condition the driver reads (no Event, no taint), allocatable drops, the pod on that GPU fails; recovery clears it', async () => {
    const victim = await runPodOn('xid-victim', 'gpu-node-0', 3);
    const bystander = await runPodOn('xid-bystander', 'gpu-node-0', 4);
    expect((await postFault({ nodeName: 'gpu-node-0', kind: 'xid', gpuIndex: 3, xid: 79 })).status).toBe(204);

    const sick = await node('gpu-node-0');
    expect(condition(sick, XID_CONDITION)).toMatchObject({ status: 'True', reason: 'SysLogsXIDErrorIsNotHealthy' });
    expect(condition(sick, XID_CONDITION)!.message).toMatch(
      /^ErrorCode:79 GPU:3 PCI:0000:5d:00 GPU_UUID:GPU-\S+ kernel:NVRM: Xid \(PCI:0000:5d:00\): 79, .*Recommended Action=RESTART_BM;$/,
    );
    // What the driver reads from it (its own parser): GPU 3, Xid 79.
    expect(nodeHealthOf(sick)).toEqual({ ready: true, networkUp: true, xids: [{ gpuIndex: 3, xid: 79 }] });
    expect(taintKeys(sick)).toEqual([]);
    expect(sick.status?.allocatable?.['nvidia.com/gpu']).toBe('7');
    expect(sick.status?.capacity?.['nvidia.com/gpu']).toBe('8');
    // A fatal Xid is a condition, not an Event too (the driver would count it twice).
    expect(await nodeEvents('gpu-node-0', XID_EVENT_REASON)).toEqual([]);
    const failed = await eventually('the pod on GPU 3 failed', async () => {
      const pod = await cluster!.core.readNamespacedPod({ namespace: 'gantry', name: victim });
      return pod.status?.phase === 'Failed' ? pod : undefined;
    });
    expect(failed.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(1);
    expect((await cluster!.core.readNamespacedPod({ namespace: 'gantry', name: bystander })).status?.phase).toBe('Running');

    expect((await postFault({ nodeName: 'gpu-node-0', kind: 'recover' })).status).toBe(204);
    const well = await node('gpu-node-0');
    expect(condition(well, XID_CONDITION)).toMatchObject({ status: 'False', reason: 'SysLogsXIDErrorIsHealthy' });
    expect(nodeHealthOf(well).xids).toEqual([]);
    expect(well.status?.allocatable?.['nvidia.com/gpu']).toBe('8');
  });

  it('an application Xid (13) is an Event only: the GPU stays healthy and untainted', async () => {
    expect((await postFault({ nodeName: 'gpu-node-1', kind: 'xid', gpuIndex: 0, xid: 13 })).status).toBe(204);
    const n = await node('gpu-node-1');
    expect(condition(n, XID_CONDITION)).toBeUndefined();
    expect(taintKeys(n)).toEqual([]);
    expect(n.status?.allocatable?.['nvidia.com/gpu']).toBe('8');
    const [event] = await nodeEvents('gpu-node-1', XID_EVENT_REASON);
    expect(event).toMatchObject({ type: 'Warning', involvedObject: { kind: 'Node', name: 'gpu-node-1' } });
    expect(event.message).toMatch(/^ErrorCode:13 GPU:0 .*Graphics Engine Exception.*Recommended Action=NONE;$/);
    expect(xidsOfEvent(event)).toEqual([{ gpuIndex: 0, xid: 13 }]);
  });

  it('a NIC down: InfiniBandStateCheck=True, read by the driver as network down; recovery clears it', async () => {
    await postFault({ nodeName: 'gpu-node-1', kind: 'nic-down' });
    const down = await node('gpu-node-1');
    expect(condition(down, NIC_CONDITION)).toMatchObject({ status: 'True', reason: 'InfiniBandStateCheckIsNotHealthy' });
    expect(nodeHealthOf(down)).toMatchObject({ ready: true, networkUp: false });
    expect(taintKeys(down)).toEqual([]);
    await postFault({ nodeName: 'gpu-node-1', kind: 'recover' });
    const up = await node('gpu-node-1');
    expect(condition(up, NIC_CONDITION)?.status).toBe('False');
    expect(nodeHealthOf(up).networkUp).toBe(true);
  });

  it('a node down: heartbeats stop, Ready=Unknown, unreachable taints, its pods lost; recovery brings it back', async () => {
    const pod = await runPodOn('lost', 'gpu-node-1', 2);
    const driver = new KubernetesDriver({ kubeconfigPath: cluster!.controlPlane.kubeconfigPath });
    try {
      await emulator!.injectFault({ nodeName: 'gpu-node-1', kind: 'node-down' });
      const down = await node('gpu-node-1');
      expect(condition(down, 'Ready')).toMatchObject({ status: 'Unknown', reason: 'NodeStatusUnknown' });
      expect(taintKeys(down)).toEqual([`${TAINTS.unreachable}:NoExecute`, `${TAINTS.unreachable}:NoSchedule`]);
      expect(nodeHealthOf(down).ready).toBe(false);
      const lost = await eventually('the pod lost', async () => {
        const p = await cluster!.core.readNamespacedPod({ namespace: 'gantry', name: pod });
        return p.status?.phase === 'Failed' ? p : undefined;
      });
      expect(lost.status?.reason).toBe('NodeLost');
      expect((await driver.discover()).nodes.find((n) => n.name === 'gpu-node-1')?.ready).toBe(false);
      const lease = await cluster!.clients.coordination.readNamespacedLease({ name: 'gpu-node-1', namespace: NODE_LEASE_NAMESPACE });
      await new Promise((r) => setTimeout(r, 2500)); // more than two renewal periods (1 s here)
      const still = await cluster!.clients.coordination.readNamespacedLease({ name: 'gpu-node-1', namespace: NODE_LEASE_NAMESPACE });
      expect(still.spec?.renewTime).toEqual(lease.spec?.renewTime);

      await emulator!.injectFault({ nodeName: 'gpu-node-1', kind: 'recover' });
      const up = await node('gpu-node-1');
      expect(condition(up, 'Ready')?.status).toBe('True');
      expect(taintKeys(up)).toEqual([]);
      expect((await driver.discover()).nodes.find((n) => n.name === 'gpu-node-1')?.ready).toBe(true);
    } finally {
      await driver.close();
    }
  });

  it('a latent GPU defect: idle it looks healthy; a burn-in on it fails part way through with its finding and a Warning Event; a reset leaves it, recover (a new part) clears it', async () => {
    expect((await postFault({ nodeName: 'gpu-node-1', kind: 'latent', gpuIndex: 5 })).status).toBe(204);
    const idle = await node('gpu-node-1');
    expect(nodeHealthOf(idle).xids).toEqual([]);
    expect(idle.status?.allocatable?.['nvidia.com/gpu']).toBe('8');

    // a burn-in of 5 s on GPUs 5 and 6: the stress phase finds GPU 5 at 40 %
    const burnIn = async (jobId: string) => {
      const replica = { replica: 0, nodeName: 'gpu-node-1', gpus: [{ index: 5 }, { index: 6 }] };
      const request = { jobId, kind: 'burn-in', durationSeconds: 5, replicas: [replica] };
      const body = replicaPod({ request, replica, namespace: 'gantry', defaultImage: 'dcgm' });
      const started = Date.now();
      await cluster!.core.createNamespacedPod({ namespace: 'gantry', body });
      const ended = await eventually(
        `${jobId} ended`,
        async () => {
          const pod = await cluster!.core.readNamespacedPod({ namespace: 'gantry', name: body.metadata!.name! });
          return pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded' ? pod : undefined;
        },
        20_000,
      );
      return { status: workloadStatusFromPods([ended], Date.now()), seconds: (Date.now() - started) / 1000 };
    };
    const first = await burnIn('burn-in-latent-1');
    expect(first.status).toMatchObject({ state: 'exited', exitCode: 1 });
    expect(first.status.message).toMatch(/^gpu 5 fail targeted_stress: .+\ngpu 6 pass all tests passed$/);
    expect(first.seconds).toBeLessThan(4.5); // part way through, not at the end of its 5 s
    const events = await eventually('the diagnostic Event', async () => {
      const found = await nodeEvents('gpu-node-1', BURN_IN_FAILED_EVENT_REASON);
      return found.length > 0 ? found : undefined;
    });
    expect(events[0]).toMatchObject({ type: 'Warning', source: { component: 'dcgm-diag' } });
    expect(events[0]!.message).toMatch(/GPU 5 of node gpu-node-1/);

    // a GPU reset (the incident loop's remediation) does not cure it
    const repaired = await fetch(`${emulator!.controlUrl}/v1/repairs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ nodeName: 'gpu-node-1', gpuIndex: 5 }),
    });
    expect(repaired.status).toBe(204);
    expect((await burnIn('burn-in-latent-2')).status.exitCode).toBe(1);

    // a new part: the burn-in passes at its end
    expect((await postFault({ nodeName: 'gpu-node-1', kind: 'recover', gpuIndex: 5 })).status).toBe(204);
    const passed = await burnIn('burn-in-latent-3');
    expect(passed.status).toMatchObject({ state: 'exited', exitCode: 0, message: 'gpu 5 pass all tests passed\ngpu 6 pass all tests passed' });
    expect(passed.seconds).toBeGreaterThanOrEqual(4.5);
  }, 60_000);

  it.each([
    ['an unknown kind', { nodeName: 'gpu-node-0', kind: 'meteor' }, 400],
    ['a latent fault without a GPU', { nodeName: 'gpu-node-0', kind: 'latent' }, 400],
    ['an xid without a GPU', { nodeName: 'gpu-node-0', kind: 'xid' }, 400],
    ['an unknown field', { nodeName: 'gpu-node-0', kind: 'recover', force: true }, 400],
    ['a GPU the node does not have', { nodeName: 'gpu-node-0', kind: 'xid', gpuIndex: 8 }, 400],
    ['an unknown node', { nodeName: 'nope', kind: 'recover' }, 404],
  ])('the control API refuses %s', async (_what, body, wantStatus) => {
    const res = await postFault(body);
    expect(res.status).toBe(wantStatus);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBeTruthy();
  });
});
