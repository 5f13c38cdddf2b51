/**
 * The checkpoint a workload saved when SIGTERM asked it to stop (a suspend): it writes
 * `gantry.io/checkpoint-saved` on its pod before it exits (shared/labels.ts), and the driver
 * waits for it, watching the job's pods (the watch also delivers a pod's last state when the
 * kubelet removes it right after the write). A workload that saves nothing, or not within the
 * wait, leaves the driver to fall back on a reference it makes from the progress it measured.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { GANTRY_ANNOTATIONS, GANTRY_LABELS } from '../shared/labels';
import { Informer } from './informer';
import type { KubeApi } from './kube-api';
import { jobSelector } from './pods';

export interface SavedCheckpoint {
  checkpoint: string;
  progressSeconds: number;
}

/** The annotation's JSON `{ checkpoint, progressSeconds, at }`; undefined when absent or malformed. */
export function savedCheckpointOf(pod: V1Pod): SavedCheckpoint | undefined {
  const text = pod.metadata?.annotations?.[GANTRY_ANNOTATIONS.checkpointSaved];
  if (!text) return undefined;
  try {
    const value = JSON.parse(text) as { checkpoint?: unknown; progressSeconds?: unknown };
    if (typeof value.checkpoint !== 'string' || value.checkpoint === '') return undefined;
    if (typeof value.progressSeconds !== 'number' || !Number.isFinite(value.progressSeconds)) return undefined;
    return { checkpoint: value.checkpoint, progressSeconds: value.progressSeconds };
  } catch {
    return undefined;
  }
}

/** The reference the driver makes when the workload saved none: job and measured progress. */
export const fallbackCheckpoint = (namespace: string, jobId: string, progressSeconds: number): string =>
  `k8s-checkpoint://${namespace}/${jobId}/${progressSeconds.toFixed(3)}`;

/** Which replica's checkpoint stands for the job: replica 0's (rank 0 writes it), else the first. */
export function jobCheckpoint(saved: ReadonlyMap<string, { replica: number; saved: SavedCheckpoint }>): SavedCheckpoint | undefined {
  const all = [...saved.values()].sort((a, b) => a.replica - b.replica);
  return all[0]?.saved;
}

export interface CheckpointWatch {
  /** Resolves when every pod has saved its checkpoint or is gone, or after `timeoutMs`: what was saved, by pod uid. */
  settled(timeoutMs: number): Promise<Map<string, { replica: number; saved: SavedCheckpoint }>>;
  stop(): Promise<void>;
}

/** Starts watching the job's pods (before they are deleted, so that no write is missed). */
export async function watchSavedCheckpoints(api: KubeApi, namespace: string, jobId: string, podUids: readonly string[]): Promise<CheckpointWatch> {
  const saved = new Map<string, { replica: number; saved: SavedCheckpoint }>();
  const gone = new Set<string>();
  let notify = () => undefined as void;
  const informer = new Informer<V1Pod>({
    what: `pods of job ${jobId} (checkpoints)`,
    source: api.podInformerSource(namespace, jobSelector(jobId)),
    backoff: { initialMs: 100, maxMs: 1_000 },
    warn: () => undefined,
    onDelta: ({ type, object }) => {
      const uid = object.metadata?.uid;
      if (!uid || !podUids.includes(uid)) return;
      const checkpoint = savedCheckpointOf(object);
      if (checkpoint) saved.set(uid, { replica: Number(object.metadata?.labels?.[GANTRY_LABELS.replica] ?? 0), saved: checkpoint });
      if (type === 'DELETED') gone.add(uid);
      notify();
    },
  });
  informer.start();
  const listTimeout = new Promise<void>((resolve) => setTimeout(resolve, 10_000).unref());
  await Promise.race([informer.synced(), listTimeout]);
  // A pod missing from the first list is gone already.
  const listed = new Set(informer.list().map((p) => p.metadata?.uid));
  for (const uid of podUids) if (!listed.has(uid)) gone.add(uid);
  const done = () => podUids.every((uid) => saved.has(uid) || gone.has(uid));
  return {
    settled: (timeoutMs) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => finish(), timeoutMs);
        timer.unref();
        const finish = () => {
          clearTimeout(timer);
          notify = () => undefined;
          resolve(saved);
        };
        notify = () => {
          if (done()) finish();
        };
        notify();
      }),
    stop: () => informer.stop(),
  };
}
