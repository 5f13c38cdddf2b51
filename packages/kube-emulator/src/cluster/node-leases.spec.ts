import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeConnectionPool, loadClientNode, withConnectionPool } from '../kube/client';
import { WorkQueue } from '../kube/work-queue';
import { NodeLeases } from './node-leases';

interface Seen {
  method: string;
  path: string;
  body?: { metadata?: { resourceVersion?: string }; spec?: { renewTime?: string; holderIdentity?: string } };
}

/** An API server holding one Lease per name; `conflictNext` makes the next PUT answer 409 as if someone else wrote it. */
function fakeLeaseServer() {
  const seen: Seen[] = [];
  const leases = new Map<string, { metadata: { name: string; resourceVersion: string }; spec: Record<string, unknown> }>();
  let version = 100;
  const state = { conflictNext: false };
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const body = text ? JSON.parse(text) : undefined;
      seen.push({ method: req.method!, path: req.url!, body });
      const name = decodeURIComponent(req.url!.split('/leases')[1]?.replace(/^\//, '') ?? '') || body?.metadata?.name;
      const answer = (status: number, object: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(object));
      };
      const current = leases.get(name);
      if (req.method === 'GET') return current ? answer(200, current) : answer(404, { code: 404 });
      if (req.method === 'POST') {
        if (current) return answer(409, { code: 409 });
        const created = { ...body, metadata: { ...body.metadata, resourceVersion: String(++version) } };
        leases.set(name, created);
        return answer(201, created);
      }
      if (req.method === 'PUT') {
        if (!current) return answer(404, { code: 404 });
        if (state.conflictNext || body.metadata.resourceVersion !== current.metadata.resourceVersion) {
          state.conflictNext = false;
          current.metadata.resourceVersion = String(++version); // someone else's write
          return answer(409, { code: 409 });
        }
        const updated = { ...body, metadata: { ...body.metadata, resourceVersion: String(++version) } };
        leases.set(name, updated);
        return answer(200, updated);
      }
      answer(405, {});
    });
  });
  return { server, seen, state };
}

describe('NodeLeases', () => {
  let fake: ReturnType<typeof fakeLeaseServer>;
  let config: ReturnType<typeof withConnectionPool>;
  let leases: NodeLeases;

  beforeEach(async () => {
    fake = fakeLeaseServer();
    await new Promise<void>((r) => fake.server.listen(0, '127.0.0.1', r));
    const { port } = fake.server.address() as AddressInfo;
    const kc = new (loadClientNode().KubeConfig)();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    config = withConnectionPool(kc, 4);
    leases = new NodeLeases(config, new WorkQueue(4), 40);
  });

  afterEach(async () => {
    closeConnectionPool(config);
    await new Promise((r) => (fake.server as Server).close(r));
  });

  const calls = () => fake.seen.map((s) => s.method);

  it('renews with one UPDATE of the Lease the last write got back (its resourceVersion the precondition)', async () => {
    await leases.create('n1', 'uid-1');
    await leases.renew('n1', 'uid-1');
    await leases.renew('n1', 'uid-1');
    expect(calls()).toEqual(['POST', 'PUT', 'PUT']);
    const [created, first, second] = fake.seen;
    expect(first!.body!.metadata!.resourceVersion).toBe('101'); // the created Lease's
    expect(second!.body!.metadata!.resourceVersion).toBe('102'); // the first renewal's answer
    expect(second!.body!.spec!.holderIdentity).toBe('n1');
    // a MicroTime keeps six fractional digits on the wire
    expect(second!.body!.spec!.renewTime).toMatch(/\.\d{6}Z$/);
    expect(created!.path).toBe('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases');
  });

  it('reads the Lease again when someone else wrote it (409), and creates it when it is gone (404)', async () => {
    await leases.create('n1', undefined);
    fake.state.conflictNext = true;
    await leases.renew('n1', undefined);
    expect(calls()).toEqual(['POST', 'PUT', 'GET', 'PUT']);
    fake.seen.length = 0;
    await leases.renew('n2', undefined); // never created: no Lease known, none on the server
    expect(calls()).toEqual(['GET', 'POST']);
  });

  it("skips a node's renewal while its previous one has not answered (no self-inflicted conflicts)", async () => {
    await leases.create('n1', undefined);
    await Promise.all([leases.renew('n1', undefined), leases.renew('n1', undefined)]);
    expect(calls()).toEqual(['POST', 'PUT']);
    await leases.renew('n1', undefined);
    expect(calls()).toEqual(['POST', 'PUT', 'PUT']);
  });
});
