/**
 * Bare metal through the Kubernetes driver against a real kube-apiserver (v1.20), as the
 * gantry-driver ServiceAccount (deploy/kubernetes/rbac.yaml): the node leaves the schedulable pool
 * (cordoned, labelled with its step and lease, the image annotated), the provisioning hook runs
 * each step (docs/bare-metal.md), and `deprovision` gives the node back.
 */
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubernetesDriver } from './kubernetes-driver';
import { BARE_METAL_ANNOTATIONS, BARE_METAL_LABELS } from './bare-metal-hook';
import { startRealCluster, type RealCluster } from './__tests__/real-cluster';

const HOOK_MS = 240_000;
const TEST_MS = 60_000;

let cluster: RealCluster;
const dir = mkdtempSync(join(tmpdir(), 'gantry-bare-metal-'));
const log = join(dir, 'hook.log');

beforeAll(async () => {
  cluster = await startRealCluster({ nodes: ['bm-node-0', 'bm-node-1', 'bm-node-2'] });
}, HOOK_MS);

afterAll(async () => {
  await cluster?.stop();
}, HOOK_MS);

const node = async (name: string) => cluster.admin.core.readNode({ name });
/** The hook: appends each step it is given (stdin JSON and the environment) to a log; exits 0. */
const recordingHook = `{ cat; echo " $GANTRY_BARE_METAL_ACTION $GANTRY_BARE_METAL_NODE $GANTRY_BARE_METAL_LEASE $GANTRY_BARE_METAL_IMAGE"; } >> '${log}'`;

it(
  'provision cordons and labels the node and runs the hook; power off and on relabel it; deprovision gives it back',
  async () => {
    const driver = new KubernetesDriver({ kubeConfig: cluster.driverConfig, pollSeconds: 0.05, bareMetalHook: { command: recordingHook } });
    try {
      await driver.bareMetal('bm-node-0', { action: 'provision', leaseId: 'lease-1', image: 'ubuntu-22.04-cuda-12.4' });
      let n = await node('bm-node-0');
      expect(n.spec?.unschedulable).toBe(true);
      expect(n.metadata?.labels?.[BARE_METAL_LABELS.state]).toBe('deployed');
      expect(n.metadata?.labels?.[BARE_METAL_LABELS.lease]).toBe('lease-1');
      expect(n.metadata?.annotations?.[BARE_METAL_ANNOTATIONS.image]).toBe('ubuntu-22.04-cuda-12.4');
      const first = readFileSync(log, 'utf8').trim().split('\n');
      expect(first).toHaveLength(1);
      const [json, env] = first[0]!.split('} ');
      expect(JSON.parse(`${json}}`)).toEqual({ action: 'provision', node: 'bm-node-0', leaseId: 'lease-1', image: 'ubuntu-22.04-cuda-12.4' });
      expect(env).toBe('provision bm-node-0 lease-1 ubuntu-22.04-cuda-12.4');

      // Asked again (a retried queue job): the labels say it is done, the hook does not run twice.
      await driver.bareMetal('bm-node-0', { action: 'provision', leaseId: 'lease-1', image: 'ubuntu-22.04-cuda-12.4' });
      expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(1);

      await driver.bareMetal('bm-node-0', { action: 'power-off', leaseId: 'lease-1' });
      n = await node('bm-node-0');
      expect(n.metadata?.labels?.[BARE_METAL_LABELS.state]).toBe('powered-off');
      expect(n.spec?.unschedulable).toBe(true);
      await driver.bareMetal('bm-node-0', { action: 'power-on', leaseId: 'lease-1' });
      expect((await node('bm-node-0')).metadata?.labels?.[BARE_METAL_LABELS.state]).toBe('deployed');

      await driver.bareMetal('bm-node-0', { action: 'deprovision', leaseId: 'lease-1' });
      n = await node('bm-node-0');
      expect(n.spec?.unschedulable ?? false).toBe(false); // the API server drops a false unschedulable (omitempty)
      expect(n.metadata?.labels?.[BARE_METAL_LABELS.state]).toBeUndefined();
      expect(n.metadata?.labels?.[BARE_METAL_LABELS.lease]).toBeUndefined();
      expect(n.metadata?.annotations?.[BARE_METAL_ANNOTATIONS.image]).toBeUndefined();
      expect(
        readFileSync(log, 'utf8')
          .trim()
          .split('\n')
          .map((l) => l.split('} ')[1]!.split(' ')[0]),
      ).toEqual(['provision', 'power-off', 'power-on', 'deprovision']);
    } finally {
      await driver.close();
    }
  },
  TEST_MS,
);

it(
  'a failing hook fails the step and leaves the node cordoned in it (nothing back in the pool by mistake)',
  async () => {
    const driver = new KubernetesDriver({
      kubeConfig: cluster.driverConfig,
      pollSeconds: 0.05,
      bareMetalHook: { command: 'echo "ironic: no BareMetalHost for this node" >&2; exit 3' },
    });
    try {
      await expect(driver.bareMetal('bm-node-1', { action: 'provision', leaseId: 'lease-2', image: 'img' })).rejects.toThrow(
        /exited 3: ironic: no BareMetalHost/,
      );
      const n = await node('bm-node-1');
      expect(n.spec?.unschedulable).toBe(true);
      expect(n.metadata?.labels?.[BARE_METAL_LABELS.state]).toBe('provisioning');
    } finally {
      await driver.close();
    }
  },
  TEST_MS,
);

it(
  'a webhook hook gets the step POSTed as JSON; its 2xx answer ends the step',
  async () => {
    const got: unknown[] = [];
    const server: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        got.push({ method: req.method, type: req.headers['content-type'], body: JSON.parse(body) });
        res.writeHead(202).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/maas`;
    const driver = new KubernetesDriver({ kubeConfig: cluster.driverConfig, pollSeconds: 0.05, bareMetalHook: { url } });
    try {
      await driver.bareMetal('bm-node-2', { action: 'provision', leaseId: 'lease-3', image: 'rocky-9' });
      expect(got).toEqual([
        { method: 'POST', type: 'application/json', body: { action: 'provision', node: 'bm-node-2', leaseId: 'lease-3', image: 'rocky-9' } },
      ]);
      expect((await node('bm-node-2')).metadata?.labels?.[BARE_METAL_LABELS.state]).toBe('deployed');
      expect(existsSync(log)).toBe(true);
    } finally {
      await driver.close();
      await new Promise<void>((r) => server.close(() => r()));
    }
  },
  TEST_MS,
);
