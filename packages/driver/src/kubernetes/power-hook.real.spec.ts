/**
 * Power through the Kubernetes driver against a real kube-apiserver, as the gantry-driver
 * ServiceAccount: the node is cordoned and labelled gantry.io/power-state while it powers down
 * and stays off, and the power hook (a command, or a webhook) is what switches the machine.
 */
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubernetesDriver } from './kubernetes-driver';
import type { PowerHook } from './power-hook';
import { startRealCluster, WORKLOAD_NAMESPACE, type RealCluster } from './__tests__/real-cluster';

const HOOK_MS = 240_000;
const TEST_MS = 60_000;

let cluster: RealCluster;
let dir: string;
let webhook: Server;
const webhookCalls: unknown[] = [];
let webhookStatus = 200;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gantry-power-hook-'));
  webhook = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      webhookCalls.push(JSON.parse(body));
      res.statusCode = webhookStatus;
      res.end();
    });
  });
  await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
  cluster = await startRealCluster({ nodes: ['pw-a', 'pw-b', 'pw-c'] });
}, HOOK_MS);

afterAll(async () => {
  await cluster?.stop();
  await new Promise((resolve) => webhook?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
}, HOOK_MS);

const nodeOf = (name: string) => cluster.admin.core.readNode({ name });
const driverWith = (powerHook: PowerHook | undefined) =>
  new KubernetesDriver({ kubeConfig: cluster.driverConfig, pollSeconds: 0.05, apiRetrySeconds: 10, powerHook, powerOnTimeoutSeconds: 10 });

describe('KubernetesDriver.setPower', () => {
  it(
    'powers off: cordon, label powering-down, the hook command, label off; on: the hook, Ready, label on and uncordon',
    async () => {
      const log = join(dir, 'calls.log');
      const driver = driverWith({ command: `echo "$1 $2 $GANTRY_POWER_ACTION" >> ${log}` });
      try {
        await driver.setPower('pw-a', 'off');
        const off = await nodeOf('pw-a');
        expect(off.spec?.unschedulable).toBe(true);
        expect(off.metadata?.labels?.['gantry.io/power-state']).toBe('off');
        expect(readFileSync(log, 'utf8')).toBe('off pw-a off\n');
        const seen = (await driver.discover()).nodes.find((n) => n.name === 'pw-a')!;
        expect(seen).toMatchObject({ powerState: 'off', unschedulable: true });

        await driver.setPower('pw-a', 'off'); // idempotent: the hook is not run again
        expect(readFileSync(log, 'utf8')).toBe('off pw-a off\n');

        await driver.setPower('pw-a', 'on');
        const on = await nodeOf('pw-a');
        expect(on.spec?.unschedulable ?? false).toBe(false); // the API server drops a false unschedulable (omitempty)
        expect(on.metadata?.labels?.['gantry.io/power-state']).toBe('on');
        expect(readFileSync(log, 'utf8')).toBe('off pw-a off\non pw-a on\n');
      } finally {
        await driver.close();
      }
    },
    TEST_MS,
  );

  it(
    'refuses to power off a node running Gantry pods, without calling the hook',
    async () => {
      const log = join(dir, 'busy.log');
      const driver = driverWith({ command: `echo "$1 $2" >> ${log}` });
      try {
        await cluster.admin.core.createNamespacedPod({
          namespace: WORKLOAD_NAMESPACE,
          body: {
            metadata: { name: 'gantry-busy-0', labels: { 'gantry.io/job-id': 'busy', 'gantry.io/replica': '0' } },
            spec: { nodeName: 'pw-b', containers: [{ name: 'c', image: 'x' }] },
          },
        });
        await expect(driver.setPower('pw-b', 'off')).rejects.toThrow(/still runs Gantry pods \(gantry-busy-0\)/);
        expect(existsSync(log)).toBe(false);
        const node = await nodeOf('pw-b');
        expect(node.spec?.unschedulable).not.toBe(true);
        expect(node.metadata?.labels?.['gantry.io/power-state']).toBeUndefined();
      } finally {
        await driver.close();
      }
    },
    TEST_MS,
  );

  it(
    'calls the webhook; a failed power-on leaves the node labelled off and cordoned; no hook at all is an error naming the settings',
    async () => {
      const url = `http://127.0.0.1:${(webhook.address() as { port: number }).port}/power`;
      const driver = driverWith({ webhookUrl: url });
      try {
        await driver.setPower('pw-c', 'off');
        expect(webhookCalls).toEqual([{ node: 'pw-c', action: 'off' }]);
        webhookStatus = 503;
        await expect(driver.setPower('pw-c', 'on')).rejects.toThrow(/power on of node pw-c: the power webhook answered 503/);
        const node = await nodeOf('pw-c');
        expect(node.metadata?.labels?.['gantry.io/power-state']).toBe('off');
        expect(node.spec?.unschedulable).toBe(true);
      } finally {
        await driver.close();
      }
      const bare = driverWith(undefined);
      try {
        await expect(bare.setPower('pw-c', 'on')).rejects.toThrow(/no power hook is configured \(set GANTRY_POWER_COMMAND or GANTRY_POWER_WEBHOOK_URL/);
      } finally {
        await bare.close();
      }
    },
    TEST_MS,
  );
});
