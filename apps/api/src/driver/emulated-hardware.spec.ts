import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ClusterDriver, FaultInjection } from '@gantry/driver';
import { EmulatorControlClient, withEmulatedHardware } from './emulated-hardware';
import { parseConfig } from '../config/config';

/** A stand-in for the kube-emulator's control API: records the faults, 404 for an unknown node. */
async function controlApi(): Promise<{ url: string; faults: FaultInjection[]; server: Server }> {
  const faults: FaultInjection[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/faults') return void res.writeHead(404).end();
      const fault = JSON.parse(body) as FaultInjection;
      if (fault.nodeName === 'nowhere') return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"unknown node nowhere"}');
      faults.push(fault);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, faults, server };
}

describe('the hardware of a kube-emulator cluster', () => {
  let api: Awaited<ReturnType<typeof controlApi>>;
  beforeAll(async () => (api = await controlApi()));
  afterAll(() => new Promise((r) => api.server.close(r)));

  it('injects faults, resets a GPU and reboots a node through the control API', async () => {
    const driver = withEmulatedHardware({ name: 'kubernetes' } as ClusterDriver, new EmulatorControlClient(api.url));
    await driver.injectFault!({ nodeName: 'h100-s0-l0-n0', kind: 'xid', gpuIndex: 3, xid: 79 });
    await driver.resetGpu!('h100-s0-l0-n0', 3);
    await driver.rebootNode!('h100-s0-l0-n1');
    expect(api.faults).toEqual([
      { nodeName: 'h100-s0-l0-n0', kind: 'xid', gpuIndex: 3, xid: 79 },
      { nodeName: 'h100-s0-l0-n0', kind: 'recover', gpuIndex: 3 },
      { nodeName: 'h100-s0-l0-n1', kind: 'recover' },
    ]);
  });

  it("fails with the emulator's answer when it refuses", async () => {
    await expect(new EmulatorControlClient(api.url).fault({ nodeName: 'nowhere', kind: 'node-down' })).rejects.toThrow(/404 .*unknown node nowhere/);
  });

  it('is configured only for the kubernetes driver, and then allows fault injection', () => {
    const kube = parseConfig({ GANTRY_DRIVER: 'kubernetes', GANTRY_KUBE_EMULATOR_URL: 'http://127.0.0.1:9401' });
    expect(kube.driver).toMatchObject({ faultInjection: true, kubeEmulatorUrl: 'http://127.0.0.1:9401' });
    expect(parseConfig({ GANTRY_DRIVER: 'kubernetes' }).driver).toMatchObject({ faultInjection: false, kubeEmulatorUrl: undefined });
    expect(parseConfig({ GANTRY_DRIVER: 'simulated', GANTRY_KUBE_EMULATOR_URL: 'http://127.0.0.1:9401' }).driver).toMatchObject({
      faultInjection: true,
      kubeEmulatorUrl: undefined,
    });
  });
});
