import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { startControlPlane, type ControlPlane } from './control-plane';
import { PORT_RESERVATIONS_DIR } from './ports';
import { alive } from './processes';

/** One call to the API server: [status, parsed body]; status 0 when it does not answer. */
function call(cp: ControlPlane, method: string, path: string, body?: object, token = cp.adminToken): Promise<[number, { [key: string]: unknown }]> {
  return new Promise((resolve) => {
    const req = request(
      `${cp.server}${path}`,
      { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, rejectUnauthorized: false, timeout: 5_000 },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve([res.statusCode ?? 0, text.startsWith('{') ? (JSON.parse(text) as { [key: string]: unknown }) : {}]));
      },
    );
    req.on('error', () => resolve([0, {}]));
    req.on('timeout', () => req.destroy());
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

const pidOf = (cp: ControlPlane, name: string) => Number(readFileSync(join(cp.dir, `${name}.pid`), 'utf8'));

describe('startControlPlane', () => {
  let cp: ControlPlane;
  afterAll(async () => cp?.stop());

  it('starts etcd and kube-apiserver with RBAC and token auth on reserved ports', async () => {
    cp = await startControlPlane();
    expect(cp.server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect((await call(cp, 'GET', '/readyz'))[0]).toBe(200);
    expect((await call(cp, 'GET', '/api/v1/nodes', undefined, 'not-a-token'))[0]).toBe(401);
    expect(readFileSync(cp.kubeconfigPath, 'utf8')).toContain(cp.adminToken);
    expect(cp.kubeConfigOptions('t').users).toEqual([{ name: 'user', token: 't' }]);
    const port = Number(new URL(cp.server).port);
    expect(existsSync(join(PORT_RESERVATIONS_DIR, String(port)))).toBe(true);
  });

  it('restarts the API server on the same etcd and port: objects survive', async () => {
    const [created] = await call(cp, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'survives' } });
    expect(created).toBe(201);
    const before = pidOf(cp, 'apiserver');

    await cp.stopApiServer();
    expect(alive(before)).toBe(false);
    expect((await call(cp, 'GET', '/readyz'))[0]).toBe(0);

    await cp.startApiServer();
    expect(pidOf(cp, 'apiserver')).not.toBe(before);
    const [status, namespace] = await call(cp, 'GET', '/api/v1/namespaces/survives');
    expect(status).toBe(200);
    expect((namespace.metadata as { name: string }).name).toBe('survives');
  });

  it('stops everything, removes its directory and releases its ports; a second stop is a no-op', async () => {
    const pids = [pidOf(cp, 'apiserver'), pidOf(cp, 'etcd')];
    const port = Number(new URL(cp.server).port);
    const started = Date.now();
    await cp.stop();
    await cp.stop();
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(pids.filter(alive)).toEqual([]);
    expect(existsSync(cp.dir)).toBe(false);
    expect(existsSync(join(PORT_RESERVATIONS_DIR, String(port)))).toBe(false);
  });

  it('fails with the install command when the binary is missing', async () => {
    await expect(startControlPlane({ apiserverBin: '/nonexistent/kube-apiserver' })).rejects.toThrow(/scripts\/install\.sh/);
  });
});
