import { expect, test } from '@playwright/test';
import { GantryApiError } from '@gantry/sdk';
import { client, demoKey, until } from '../support';

const failure = (p: Promise<unknown>): Promise<GantryApiError> =>
  p.then(
    () => {
      throw new Error('expected an API error');
    },
    (e: unknown) => e as GantryApiError,
  );
const statusOf = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (e: unknown) => (e instanceof GantryApiError ? e.status : 0),
  );

test.describe('inference endpoints through the SDK', () => {
  test('an invoke at zero cold-starts a replica; bad scaling is a 409 with the reason; min > max is a 400', async () => {
    const research = client(demoKey('Max (member)'));
    const me = await research.me();
    const ep = await research.endpoints.create({
      teamId: me.teamId!,
      name: 'e2e-api-llm',
      model: 'mistral-7b',
      resources: { gpus: 1, gpuModel: 'A100-80GB' },
      maxReplicas: 2,
    });
    expect(ep.state).toBe('scaled-to-zero');
    const r = await research.endpoints.invoke(ep.id, 'hi');
    expect(r.coldStart).toBe(true);
    const d = await until(async () => {
      const x = await research.endpoints.get(ep.id);
      return x.coldStarts.count === 1 ? x : undefined;
    });
    expect(d.replicaList[0]!.gpus).toHaveLength(1);
    expect(d.coldStarts.p95Ms).not.toBeNull();
    const beyond = await failure(research.endpoints.scale(ep.id, 3));
    expect(beyond.status).toBe(409);
    expect(beyond.message).toContain('maxReplicas');
    const bad = await failure(research.endpoints.update(ep.id, { minReplicas: 3 }));
    expect(bad.status).toBe(400);
    await research.endpoints.remove(ep.id);
  });

  test("another tenant's key gets 404 on every endpoint route", async () => {
    const research = client(demoKey('Max (member)'));
    const globex = client(demoKey('Globex'));
    const me = await research.me();
    const ep = await research.endpoints.create({ teamId: me.teamId!, name: 'e2e-private-ep', model: 'm', resources: { gpus: 1 } });
    for (const call of [
      () => globex.endpoints.get(ep.id),
      () => globex.endpoints.update(ep.id, { maxReplicas: 2 }),
      () => globex.endpoints.scale(ep.id, 1),
      () => globex.endpoints.invoke(ep.id, 'x'),
      () => globex.sim.traffic({ endpointId: ep.id, rps: 5, durationSeconds: 5 }),
      () => globex.endpoints.remove(ep.id),
    ]) {
      expect(await statusOf(call())).toBe(404);
    }
    expect((await globex.endpoints.list()).items.map((e) => e.id)).not.toContain(ep.id);
    expect((await research.endpoints.get(ep.id)).id).toBe(ep.id);
    await research.endpoints.remove(ep.id);
  });
});
