import { expect, test } from '@playwright/test';
import { client, demoKey, until } from '../support';
import { podsOnNode } from './kube';

test('an endpoint at zero cold-starts a replica pod on the first request', async () => {
  const research = client(demoKey('Max (member)'));
  const me = await research.me();
  const ep = await research.endpoints.create({
    teamId: me.teamId!,
    name: 'kube-e2e-llm',
    model: 'mistral-7b',
    resources: { gpus: 1, gpuModel: 'A100-80GB' },
    maxReplicas: 2,
  });
  expect(ep.state).toBe('scaled-to-zero');
  const r = await research.endpoints.invoke(ep.id, 'hi');
  expect(r.coldStart).toBe(true);
  const d = await until(async () => {
    const x = await research.endpoints.get(ep.id);
    return x.coldStarts.count === 1 && x.replicaList[0]?.state === 'ready' ? x : undefined;
  });
  expect(d.replicaList[0]!.gpus).toHaveLength(1);
  const replica = d.replicaList[0]!;
  // the replica is a pod on the replica's node, Running, asking for one GPU
  const pods = await podsOnNode(replica.nodeName!);
  const pod = pods.find((p) => p.spec.containers[0]!.resources?.requests?.['nvidia.com/gpu'] === '1' && p.status?.phase === 'Running');
  expect(pod, `a running 1-GPU pod on ${replica.nodeName}: ${pods.map((p) => p.metadata.name).join(', ')}`).toBeDefined();
  await research.endpoints.remove(ep.id);
});
