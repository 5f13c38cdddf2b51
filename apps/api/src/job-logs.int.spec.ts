import { eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

type Line = { at: string; replica: number; seq: string; stream: string; text: string };

/** A job's log: collected from the simulated cluster by the worker, read through the caller's scope. */
describe('job logs (real Postgres and Redis, simulated cluster)', () => {
  let sys: TestSystem;
  let t: Awaited<ReturnType<typeof makeTenant>>;
  let other: Awaited<ReturnType<typeof makeTenant>>;

  beforeAll(async () => {
    sys = await startSystem({ GANTRY_SIM_SPEED: '10' });
    t = await makeTenant(sys.db, 'logs-int', { quota: { guaranteed: 64, limit: 128 } });
    other = await makeTenant(sys.db, 'logs-other', { quota: { guaranteed: 8, limit: 8 } });
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
  });
  afterAll(async () => sys?.close());

  const logs = async (id: string, query = '', auth = t.auth) => sys.http().get(`/v1/jobs/${id}/logs${query}`).set('Authorization', auth);

  it("follows a running job's progress, then its end; since and tail select lines; another tenant gets 404", async () => {
    const job = (
      await sys
        .http()
        .post('/v1/jobs')
        .set('Authorization', t.auth)
        .send({
          teamId: t.team.id,
          name: 'logged',
          kind: 'training',
          replicas: 2,
          resources: { gpus: 8, gpuModel: 'A100-80GB' },
          simulation: { durationSeconds: 300 },
        })
    ).body as { id: string };

    const running = await eventually(async () => {
      const r = await logs(job.id);
      const progress = (r.body.lines as Line[]).filter((l) => l.text.includes('loss'));
      return r.body.state === 'running' && progress.length >= 3 ? (r.body as { lines: Line[] }) : undefined;
    }, 90_000);
    expect(running.lines.map((l) => l.text)).toEqual(
      expect.arrayContaining(['torch.distributed: world size 16, backend nccl, NCCL_IB_HCA=mlx5', expect.stringMatching(/^\[rank 1\] node a100-/)]),
    );
    expect(running.lines.find((l) => l.text.includes('loss'))!.text).toMatch(/^step \d+\/\d+ \(\d+\.\d%\) \| loss \d+\.\d{4}/);

    const last = running.lines.at(-1)!;
    const later = await eventually(async () => {
      const r = await logs(job.id, `?since=${encodeURIComponent(last.at)}`);
      return (r.body.lines as Line[]).length > 1 ? (r.body.lines as Line[]) : undefined;
    }, 60_000);
    expect(later.every((l) => l.at >= last.at)).toBe(true);
    const tail = (await logs(job.id, '?tail=2')).body;
    expect(tail.lines).toHaveLength(2);
    expect(tail.truncated).toBe(true);

    expect((await logs(job.id, '', other.auth)).status).toBe(404);
    const bad = await logs(job.id, '?tail=0');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe('tail');

    await sys.http().post(`/v1/jobs/${job.id}/cancel`).set('Authorization', t.auth);
    const ended = await eventually(async () => {
      const lines = (await logs(job.id)).body.lines as Line[];
      return lines.some((l) => l.text.startsWith('SIGTERM received: stopping at step')) ? lines : undefined;
    }, 60_000);
    const seqs = ended.map((l) => `${l.replica}/${l.seq}`);
    expect(new Set(seqs).size).toBe(seqs.length); // each line stored once, however often it was read
  }, 240_000);
});
