import { expect, test } from '@playwright/test';
import { GantryApiError } from '@gantry/sdk';
import { client, demoKey, until } from '../support';

test.describe('jobs through the SDK with API keys', () => {
  test('a submitted job is placed on GPUs, runs and succeeds', async () => {
    const research = client(demoKey('Max (member)'));
    const me = await research.me();
    const teamId = me.teamId!;
    const job = await research.jobs.create({
      teamId,
      name: 'e2e-train',
      kind: 'training',
      resources: { gpus: 4, gpuModel: 'H100-80GB' },
      simulation: { durationSeconds: 20 },
    });
    expect(job.state).toBe('pending');

    const running = await until(async () => {
      const j = await research.jobs.get(job.id);
      return j.state === 'running' ? j : undefined;
    });
    expect(running.placement).toHaveLength(1);
    expect(running.placement[0]!.gpus).toHaveLength(4);
    const node = await research.nodes.get(running.placement[0]!.nodeId);
    const held = node.gpus.filter((g) => g.jobId === job.id).map((g) => g.index);
    expect(held.sort()).toEqual(running.placement[0]!.gpus.map((g) => g.index).sort());

    const done = await until(async () => {
      const j = await research.jobs.get(job.id);
      return j.state === 'succeeded' ? j : undefined;
    }, 45_000);
    expect(done.placement).toEqual([]);
    expect(done.events.map((e) => e.type)).toContain('job.succeeded');
  });

  test("another tenant's key gets 404, never the job", async () => {
    const research = client(demoKey('Max (member)'));
    const globex = client(demoKey('Globex'));
    const me = await research.me();
    const job = await research.jobs.create({ teamId: me.teamId!, name: 'e2e-private', kind: 'batch', resources: { gpuFraction: 0.5 } });

    const err = await globex.jobs.get(job.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GantryApiError);
    expect((err as GantryApiError).status).toBe(404);
    expect((err as GantryApiError).code).toBe('not_found');
    const theirs = await globex.jobs.list({ limit: 500 });
    expect(theirs.items.map((j) => j.id)).not.toContain(job.id);
    const cancel = await globex.jobs.cancel(job.id).catch((e: unknown) => e);
    expect((cancel as GantryApiError).status).toBe(404);
    expect((await research.jobs.get(job.id)).state).not.toBe('cancelled');
    await research.jobs.cancel(job.id);
  });

  test('bad input is a 400 naming the field, a bad key a 401', async () => {
    const research = client(demoKey('Max (member)'));
    const me = await research.me();
    const err = (await research.jobs
      .create({ teamId: me.teamId!, name: 'bad', kind: 'training', resources: { gpus: 64 } })
      .catch((e: unknown) => e)) as GantryApiError;
    expect(err.status).toBe(400);
    expect(err.details?.map((d) => d.field)).toContain('resources.gpus');
    const anon = client('gk_nobody1234_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    expect(((await anon.me().catch((e: unknown) => e)) as GantryApiError).status).toBe(401);
  });
});
