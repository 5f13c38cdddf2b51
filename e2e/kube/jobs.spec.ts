import { expect, test } from '@playwright/test';
import { client, demoKey, until } from '../support';
import { kubeNode, podsOfJob } from './kube';

/** Jobs on the Kubernetes-backed system: each replica is a pod bound to the node Gantry chose. */
test.describe('jobs on Kubernetes', () => {
  const research = () => client(demoKey('Max (member)'));
  type JobState = Awaited<ReturnType<ReturnType<typeof research>['jobs']['get']>>['state'];
  const state = (want: JobState, id: string, ms = 30_000) =>
    until(async () => {
      const j = await research().jobs.get(id);
      return j.state === want ? j : undefined;
    }, ms);

  test('a job runs as a pod on its placement, succeeds when the pod does, and a cancel deletes the pod', async () => {
    const me = await research().me();
    const job = await research().jobs.create({
      teamId: me.teamId!,
      name: 'kube-e2e-train',
      kind: 'training',
      resources: { gpus: 4, gpuModel: 'H100-80GB' },
      simulation: { durationSeconds: 8 },
    });
    const running = await state('running', job.id);
    const pods = await until(async () => {
      const p = await podsOfJob(job.id);
      return p.length === 1 && p[0]!.status?.phase === 'Running' ? p : undefined;
    });
    expect(pods[0]!.spec.nodeName).toBe(running.placement[0]!.nodeName);
    expect(pods[0]!.spec.containers[0]!.resources?.requests?.['nvidia.com/gpu']).toBe('4');
    const done = await state('succeeded', job.id, 45_000);
    expect(done.events.map((e) => e.type)).toContain('job.succeeded');

    const long = await research().jobs.create({
      teamId: me.teamId!,
      name: 'kube-e2e-cancel',
      kind: 'batch',
      resources: { gpus: 1 },
      simulation: { durationSeconds: 600 },
    });
    await state('running', long.id);
    expect(await podsOfJob(long.id)).toHaveLength(1);
    await research().jobs.cancel(long.id);
    await state('cancelled', long.id);
    await until(async () => (await podsOfJob(long.id)).length === 0);
  });

  test('a gang of 4 x 8 GPUs bound to one leaf runs as 4 pods under one leaf switch', async () => {
    const me = await research().me();
    const job = await research().jobs.create({
      teamId: me.teamId!,
      name: 'kube-e2e-gang',
      kind: 'training',
      replicas: 4,
      resources: { gpus: 8, gpuModel: 'H100-80GB' },
      topology: { level: 'leaf', required: true },
      simulation: { durationSeconds: 600 },
    });
    const running = await state('running', job.id);
    expect(running.placement).toHaveLength(4);
    const pods = await until(async () => {
      const p = await podsOfJob(job.id);
      return p.length === 4 && p.every((x) => x.status?.phase === 'Running') ? p : undefined;
    });
    const nodes = pods.map((p) => p.spec.nodeName!).sort();
    expect(nodes).toEqual(running.placement.map((p) => p.nodeName).sort());
    expect(new Set(nodes).size).toBe(4);
    const leaves = await Promise.all(nodes.map(async (n) => (await kubeNode(n)).metadata.labels['fabric.topograph.run/tier-0']));
    expect(new Set(leaves).size).toBe(1);
    await research().jobs.cancel(job.id);
    await until(async () => (await podsOfJob(job.id)).length === 0);
  });

  test('suspend deletes the pod and keeps the progress; resume starts a pod that goes on from there', async () => {
    const me = await research().me();
    const job = await research().jobs.create({
      teamId: me.teamId!,
      name: 'kube-e2e-suspend',
      kind: 'training',
      resources: { gpus: 2, gpuModel: 'H100-80GB' },
      simulation: { durationSeconds: 600 },
    });
    await state('running', job.id);
    await new Promise((r) => setTimeout(r, 3000));
    await research().jobs.suspend(job.id);
    const suspended = await state('suspended', job.id);
    expect(suspended.placement).toEqual([]);
    expect(suspended.progress ?? 0).toBeGreaterThan(0);
    await until(async () => (await podsOfJob(job.id)).length === 0);

    await research().jobs.resume(job.id);
    await state('running', job.id);
    const pod = await until(async () => (await podsOfJob(job.id))[0]);
    expect(Number(pod.metadata.annotations?.['gantry.io/progress-seconds'])).toBeGreaterThan(1);
    await research().jobs.cancel(job.id);
  });

  test('a MIG slice nobody has yet is cut on demand by mig-manager, then the pod asks for it', async () => {
    const me = await research().me();
    const job = await research().jobs.create({
      teamId: me.teamId!,
      name: 'kube-e2e-mig',
      kind: 'notebook',
      resources: { migProfile: '3g.40gb', gpuModel: 'H100-80GB' },
      simulation: { durationSeconds: 600 },
    });
    const running = await state('running', job.id, 45_000);
    const slice = running.placement[0]!.gpus[0]!;
    expect(slice.migProfile).toBe('3g.40gb');
    // The node's state label follows its latest config: another GPU's change may be applying; it settles on success.
    const node = await until(async () => {
      const n = await kubeNode(running.placement[0]!.nodeName);
      return n.metadata.labels['nvidia.com/mig.config.state'] === 'success' ? n : undefined;
    });
    expect(node.metadata.labels['nvidia.com/mig.config']).toMatch(/^gantry-/);
    const pod = await until(async () => {
      const p = (await podsOfJob(job.id))[0];
      return p?.status?.phase === 'Running' ? p : undefined;
    });
    expect(pod.spec.containers[0]!.resources?.requests?.['nvidia.com/mig-3g.40gb']).toBe('1');
    await research().jobs.cancel(job.id);
  });
});
