/**
 * deploy/kubernetes against a real kube-apiserver: every object of the kustomize base passes a
 * server-side dry run (POST, or PUT for what already exists, with ?dryRun=All), and the dry run
 * persists nothing. kubectl is not needed (CI machines may not have it).
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { loadKustomization } from './__tests__/manifests';
import { startRealCluster, type RealCluster } from './__tests__/real-cluster';

const HOOK_MS = 240_000; // a control plane: up to 100 s on a busy machine, and the RBAC objects

let cluster: RealCluster;

beforeAll(async () => {
  // Creates namespace.yaml and rbac.yaml for real (the namespaced objects need their namespaces).
  cluster = await startRealCluster();
}, HOOK_MS);

afterAll(async () => {
  await cluster?.stop();
}, HOOK_MS);

const exists = (o: KubernetesObject) =>
  cluster.admin.objects.read(o as never).then(
    () => true,
    () => false,
  );

describe('deploy/kubernetes', () => {
  const objects = loadKustomization();

  it('lists the objects Gantry needs', () => {
    const kinds = objects.map((o) => `${o.kind}/${o.metadata?.name}`);
    expect(kinds).toEqual(
      expect.arrayContaining([
        'Namespace/gantry',
        'ServiceAccount/gantry-driver',
        'ClusterRole/gantry-driver',
        'ClusterRoleBinding/gantry-driver',
        'Role/gantry-driver-workloads',
        'Role/gantry-driver-mig-parted-config',
        'ConfigMap/gantry-mig-parted-config',
        'Deployment/gantry-api',
        'Deployment/gantry-worker',
        'Deployment/gantry-console',
      ]),
    );
    const worker = objects.find((o) => o.kind === 'Deployment' && o.metadata?.name === 'gantry-worker') as
      { spec: { template: { spec: { serviceAccountName: string } } } } | undefined;
    expect(worker?.spec.template.spec.serviceAccountName).toBe('gantry-driver');
  });

  it.each(objects.map((o) => [`${o.file}: ${o.kind}/${o.metadata?.name}`, o] as const))(
    'passes a server-side dry run: %s',
    async (_name, { file: _file, ...object }) => {
      const already = await exists(object);
      if (already) await cluster.admin.objects.replace(object, undefined, 'All');
      else {
        await cluster.admin.objects.create(object, undefined, 'All');
        expect(await exists(object)).toBe(false); // a dry run persists nothing
      }
    },
    30_000,
  );
});
