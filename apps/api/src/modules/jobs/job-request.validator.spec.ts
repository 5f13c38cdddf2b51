import type { JobCreateParsed } from '@gantry/contracts';
import type { ClusterRepository } from '../cluster/cluster.repository';
import { JobRequestValidator } from './job-request.validator';

const h100Job = { replicas: 1, resources: { gpus: 8, gpuModel: 'H100-80GB' } } as unknown as JobCreateParsed;

/** A cluster whose nodes register while the API runs (the worker's inventory sync at boot). */
function cluster(...reads: Record<string, number>[]) {
  const maxGpusPerNodeByModel = jest.fn(() => Promise.resolve(new Map(Object.entries(reads.length > 1 ? reads.shift()! : reads[0]!))));
  return { repo: { maxGpusPerNodeByModel } as unknown as ClusterRepository, maxGpusPerNodeByModel };
}

describe('JobRequestValidator', () => {
  beforeEach(() => jest.useFakeTimers({ now: new Date('2026-12-06T07:00:00Z') }));
  afterEach(() => jest.useRealTimers());

  it('accepts a model whose nodes registered after its summary was read, within a second and not at the end of the cache', async () => {
    const { repo } = cluster({}, { 'H100-80GB': 8 });
    const v = new JobRequestValidator(repo);
    await expect(v.validate(h100Job)).rejects.toThrow(/resources.gpuModel: GPU model H100-80GB not in the cluster \(known: none\)/);
    jest.advanceTimersByTime(1_000);
    await expect(v.validate(h100Job)).resolves.toBeUndefined();
  });

  it('reads the summary once per 15 s for accepted submissions, once per second at most for refusals', async () => {
    const { repo, maxGpusPerNodeByModel } = cluster({ 'H100-80GB': 8 });
    const v = new JobRequestValidator(repo);
    await Promise.all([v.validate(h100Job), v.validate(h100Job), v.validate(h100Job)]);
    jest.advanceTimersByTime(10_000);
    await v.validate(h100Job);
    expect(maxGpusPerNodeByModel).toHaveBeenCalledTimes(1);

    const a100 = { replicas: 1, resources: { gpus: 1, gpuModel: 'A100-80GB' } } as unknown as JobCreateParsed;
    for (let i = 0; i < 5; i++) await expect(v.validate(a100)).rejects.toThrow(/A100-80GB not in the cluster \(known: H100-80GB\)/);
    expect(maxGpusPerNodeByModel).toHaveBeenCalledTimes(2); // the summary was 10 s old: read again once
  });
});
