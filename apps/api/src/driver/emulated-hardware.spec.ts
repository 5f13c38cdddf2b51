import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ClusterDriver, FaultInjection } from '@gantry/driver';
import { EmulatorControlClient, withEmulatedHardware } from './emulated-hardware';
import { parseConfig } from '../config/config';

/** A stand-in for the kube-emulator's control API: records the faults and repairs, 404 for an unknown node. */
async function controlApi(): Promise<{ url: string; faults: (FaultInjection | { path: string; nodeName: string; gpuIndex?: number })[]; server: Server }> {
  const faults: (FaultInjection | { path: string; nodeName: string; gpuIndex?: number })[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || (req.url !== '/v1/faults' && req.url !== '/v1/repairs')) return void res.writeHead(404).end();
      const fault = JSON.parse(body) as FaultInjection;
      if (fault.nodeName === 'nowhere') return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"unknown node nowhere"}');
      faults.push(req.url === '/v1/repairs' ? { path: req.url, ...fault } : fault);
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

  it('injects faults through the control API; a GPU reset and a node reboot are repairs (a latent defect survives them), not recover', async () => {
    const driver = withEmulatedHardware({ name: 'kubernetes' } as ClusterDriver, new EmulatorControlClient(api.url));
    await driver.injectFault!({ nodeName: 'h100-s0-l0-n0', kind: 'xid', gpuIndex: 3, xid: 79 });
    await driver.resetGpu!('h100-s0-l0-n0', 3);
    await driver.rebootNode!('h100-s0-l0-n1');
    expect(api.faults).toEqual([
      { nodeName: 'h100-s0-l0-n0', kind: 'xid', gpuIndex: 3, xid: 79 },
      { path: '/v1/repairs', nodeName: 'h100-s0-l0-n0', gpuIndex: 3 },
      { path: '/v1/repairs', nodeName: 'h100-s0-l0-n1' },
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
