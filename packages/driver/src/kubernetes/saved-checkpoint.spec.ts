import type { V1Pod } from '@kubernetes/client-node';
import { GANTRY_ANNOTATIONS } from '../shared/labels';
import { fallbackCheckpoint, jobCheckpoint, savedCheckpointOf } from './saved-checkpoint';

const pod = (annotation?: string): V1Pod => ({
  metadata: { annotations: annotation === undefined ? {} : { [GANTRY_ANNOTATIONS.checkpointSaved]: annotation } },
});

describe('saved checkpoints', () => {
  it('reads the workload-written annotation', () => {
    const saved = JSON.stringify({ checkpoint: 's3://ckpt/job-1/step-400', progressSeconds: 12.5, at: '2026-01-01T00:00:00Z' });
    expect(savedCheckpointOf(pod(saved))).toEqual({ checkpoint: 's3://ckpt/job-1/step-400', progressSeconds: 12.5 });
  });

  it.each([
    ['absent', undefined],
    ['not JSON', 'step-400'],
    ['no checkpoint', JSON.stringify({ progressSeconds: 3 })],
    ['empty checkpoint', JSON.stringify({ checkpoint: '', progressSeconds: 3 })],
    ['no progress', JSON.stringify({ checkpoint: 'x' })],
  ])('ignores an annotation that is %s', (_what, annotation) => {
    expect(savedCheckpointOf(pod(annotation))).toBeUndefined();
  });

  it("takes replica 0's checkpoint for the job", () => {
    const saved = new Map([
      ['uid-b', { replica: 1, saved: { checkpoint: 'r1', progressSeconds: 9 } }],
      ['uid-a', { replica: 0, saved: { checkpoint: 'r0', progressSeconds: 10 } }],
    ]);
    expect(jobCheckpoint(saved)).toEqual({ checkpoint: 'r0', progressSeconds: 10 });
    expect(jobCheckpoint(new Map())).toBeUndefined();
  });

  it('falls back on a reference naming the job and the measured progress', () => {
    expect(fallbackCheckpoint('gantry', 'job-1', 12.3456)).toBe('k8s-checkpoint://gantry/job-1/12.346');
  });
});
