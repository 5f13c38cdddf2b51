import type { StartRequest } from '../types';
import { generateTopology } from './generate-topology';
import { SimulatedDriver } from './simulated-driver';

const topology = generateTopology({ spines: 1, leavesPerSpine: 1, nodesPerLeaf: 2, gpusPerNode: 2, models: ['A100-80GB'] });

function twoNodeTraining(jobId: string, extra: Partial<StartRequest> = {}): StartRequest {
  return {
    jobId,
    kind: 'training',
    durationSeconds: 100,
    replicas: [
      { replica: 0, nodeName: 'a100-s0-l0-n0', gpus: [{ index: 0 }, { index: 1 }] },
      { replica: 1, nodeName: 'a100-s0-l0-n1', gpus: [{ index: 0 }, { index: 1 }] },
    ],
    ...extra,
  };
}

let driver: SimulatedDriver;
beforeEach(() => {
  jest.useFakeTimers();
  driver = new SimulatedDriver({ topology, delays: { startSeconds: 1, suspendSeconds: 2 } });
});
afterEach(async () => {
  await driver.close();
  jest.useRealTimers();
});

const texts = async (jobId: string) => (await driver.logs(jobId)).lines.map((l) => l.text);

describe('simulated job logs', () => {
  it("reports where each replica runs and rank 0's progress as the job runs, not before", async () => {
    await driver.start(twoNodeTraining('train'));
    const atStart = await driver.logs('train');
    expect(atStart.lines.map((l) => [l.replica, l.text])).toEqual(
      expect.arrayContaining([
        [1, '[rank 1] node a100-s0-l0-n1, GPU 0, 1'],
        [0, 'torch.distributed: world size 4, backend nccl, NCCL_IB_HCA=mlx5'],
      ]),
    );
    expect(atStart.lines.some((l) => l.text.includes('loss'))).toBe(false);

    await jest.advanceTimersByTimeAsync(1_000 + 10_000); // started, then 10 s of work: 10 progress lines (one per 1 % of 100 s)
    const progress = (await texts('train')).filter((t) => t.includes('loss'));
    expect(progress).toHaveLength(10);
    expect(progress[9]).toMatch(/^step \d+\/\d+ \(10\.0%\) \| loss \d+\.\d{4} \| lr .* \| \d+\.\dk tok\/s$/);
    const loss = (t: string) => Number(/loss (\d+\.\d+)/.exec(t)![1]);
    expect(loss(progress[9])).toBeLessThan(loss(progress[0]));
  });

  it('is the same for the same job and differs between jobs (generated from the job, not canned)', async () => {
    await driver.start(twoNodeTraining('a'));
    await jest.advanceTimersByTimeAsync(6_000);
    const first = await texts('a');
    const other = new SimulatedDriver({ topology, delays: { startSeconds: 1 } });
    await other.start(twoNodeTraining('a'));
    await jest.advanceTimersByTimeAsync(6_000);
    expect((await other.logs('a')).lines.map((l) => l.text).slice(0, first.length)).toEqual(first);
    await other.stop('a');
    await other.start(twoNodeTraining('b'));
    await jest.advanceTimersByTimeAsync(6_000);
    expect((await other.logs('b')).lines.map((l) => l.text).filter((t) => t.includes('loss'))).not.toEqual(first.filter((t) => t.includes('loss')));
    await other.close();
  });

  it('keeps the log across suspend and resume: the checkpoint, then progress from where it stopped', async () => {
    await driver.start(twoNodeTraining('t'));
    await jest.advanceTimersByTimeAsync(21_000);
    const suspended = driver.suspend('t');
    await jest.advanceTimersByTimeAsync(2_000);
    const { checkpoint, progressSeconds } = await suspended;
    await driver.start(twoNodeTraining('t', { progressSeconds, checkpoint }));
    await jest.advanceTimersByTimeAsync(1_000 + 5_000);
    const all = await texts('t');
    expect(all).toContain(`checkpoint saved to ${checkpoint}; exiting`);
    expect(all.some((t) => t.startsWith(`resuming from checkpoint ${checkpoint}: step`))).toBe(true);
    const percents = all.filter((t) => t.includes('loss')).map((t) => Number(/\((\d+\.\d)%\)/.exec(t)![1]));
    expect(percents).toEqual([...percents].sort((x, y) => x - y)); // never back to 0 %
    expect(percents.slice(-6)).toEqual([20, 21, 22, 23, 24, 25]);
  });

  it('ends with how the job ended and keeps it after the end; since and tail select lines', async () => {
    await driver.start(twoNodeTraining('done', { durationSeconds: 10 }));
    await jest.advanceTimersByTimeAsync(12_000);
    const logs = await driver.logs('done');
    expect(logs.lines.at(-1)!.text).toMatch(/^training finished: step (\d+)\/\1 \(100\.0%\); exit code 0$/);
    const cut = logs.lines[logs.lines.length - 3].at;
    expect((await driver.logs('done', { sinceMs: cut })).lines.every((l) => l.at >= cut)).toBe(true);
    const tail = await driver.logs('done', { tailLines: 2 });
    expect(tail.lines.filter((l) => l.replica === 0)).toEqual(logs.lines.filter((l) => l.replica === 0).slice(-2));
    expect(tail.lines.filter((l) => l.replica === 1)).toHaveLength(1);
    expect((await driver.logs('never-ran')).lines).toEqual([]);
  });
});
