/**
 * Submission-time checks: rejects requests no cluster state could ever satisfy, with a message
 * naming the problem. Pure.
 */
import { MIG_MODELS, migProfile, modelsWithMigProfile } from '@gantry/contracts';
import type { ClusterSnapshot, ReplicaRequest, TopologyLevel } from './types';

export interface RequestToValidate {
  replicas?: number;
  /** The engine's ReplicaRequest, or the API's resources (`gpuFraction`, `gpuModel` as a string or list). */
  request: Partial<ReplicaRequest> & { gpuFraction?: number; gpuModel?: string | string[] };
  topology?: { level: TopologyLevel | string; required: boolean };
}

/** What the cluster offers: GPU models and the most GPUs of each model on one node. */
export interface InventorySummary {
  maxGpusPerNode: Map<string, number> | Record<string, number>;
}

export type RequestValidation = { ok: true } | { ok: false; code: string; message: string };

const LEVELS = ['node', 'leaf', 'spine', 'any'];

/** Inventory summary of a snapshot (for `validateRequest`). */
export function inventoryOf(snapshot: ClusterSnapshot): InventorySummary {
  const max = new Map<string, number>();
  for (const n of snapshot.nodes) {
    const per = new Map<string, number>();
    for (const g of n.gpus) per.set(g.model, (per.get(g.model) ?? 0) + 1);
    for (const [m, c] of per) max.set(m, Math.max(max.get(m) ?? 0, c));
  }
  return { maxGpusPerNode: max };
}

const fail = (code: string, message: string): RequestValidation => ({ ok: false, code, message });

/**
 * `knownModels`: the GPU models that exist (a list), or an inventory summary that also knows
 * how many GPUs of each model the largest node has.
 */
export function validateRequest(req: RequestToValidate, knownModels: readonly string[] | InventorySummary): RequestValidation {
  const r = req.request;
  const perNode: Map<string, number> | null = Array.isArray(knownModels)
    ? null
    : (knownModels as InventorySummary).maxGpusPerNode instanceof Map
      ? ((knownModels as InventorySummary).maxGpusPerNode as Map<string, number>)
      : new Map(Object.entries((knownModels as InventorySummary).maxGpusPerNode));
  const models: string[] = Array.isArray(knownModels) ? [...(knownModels as readonly string[])] : [...perNode!.keys()];
  const replicas = req.replicas ?? 1;
  if (!Number.isInteger(replicas) || replicas < 1) return fail('invalid_replicas', `replicas must be a whole number >= 1 (got ${replicas})`);
  if (r.cpuMilli !== undefined && (!Number.isFinite(r.cpuMilli) || r.cpuMilli < 0)) return fail('invalid_cpu', `cpuMilli must be >= 0 (got ${r.cpuMilli})`);
  if (r.memoryMiB !== undefined && (!Number.isFinite(r.memoryMiB) || r.memoryMiB < 0))
    return fail('invalid_memory', `memoryMiB must be >= 0 (got ${r.memoryMiB})`);
  const kinds = [r.gpus !== undefined, r.migProfile !== undefined, r.gpuMilli !== undefined, r.gpuFraction !== undefined].filter(Boolean).length;
  if (kinds > 1) return fail('ambiguous_request', 'set exactly one of gpus, migProfile, gpuFraction (gpuMilli)');
  const modelList = r.gpuModels?.length ? r.gpuModels : r.gpuModel === undefined ? [] : Array.isArray(r.gpuModel) ? r.gpuModel : [r.gpuModel];
  const allowed = modelList.length && !modelList.includes('*') ? [...new Set(modelList)] : null;
  if (allowed) {
    const unknown = allowed.filter((m) => !models.includes(m));
    if (unknown.length === allowed.length) {
      return fail(
        'unknown_gpu_model',
        `GPU model${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} not in the cluster (known: ${models.join(', ') || 'none'})`,
      );
    }
  }
  const candidates = (allowed ?? models).filter((m) => models.includes(m));
  const maxOn = (ms: string[]) => (perNode ? Math.max(0, ...ms.map((m) => perNode.get(m) ?? 0)) : Number.POSITIVE_INFINITY);

  if (r.gpuFraction !== undefined && (!(r.gpuFraction > 0) || !(r.gpuFraction < 1))) {
    return fail('invalid_fraction', `gpuFraction must be strictly between 0 and 1 (got ${r.gpuFraction}); use gpus for whole GPUs`);
  }
  if (r.gpuMilli !== undefined && (!Number.isInteger(r.gpuMilli) || r.gpuMilli < 1 || r.gpuMilli > 999)) {
    return fail('invalid_fraction', `gpuMilli must be a whole number of thousandths in 1..999 (got ${r.gpuMilli})`);
  }
  if (r.gpus !== undefined) {
    if (!Number.isInteger(r.gpus) || r.gpus < 1) return fail('invalid_gpus', `gpus must be a whole number >= 1 (got ${r.gpus})`);
    const max = maxOn(candidates);
    if (r.gpus > max) {
      return fail(
        'too_many_gpus',
        `${r.gpus} GPUs per replica, but no node has more than ${max}${allowed ? ` ${allowed.join(' | ')}` : ''} GPUs; split into replicas`,
      );
    }
  }
  if (r.migProfile !== undefined) {
    const on = modelsWithMigProfile(r.migProfile);
    if (on.length === 0) {
      return fail('unknown_mig_profile', `unknown MIG profile ${r.migProfile} (MIG models: ${MIG_MODELS.join(', ')})`);
    }
    if (allowed && !allowed.some((m) => migProfile(m, r.migProfile!))) {
      return fail('mig_profile_not_on_model', `MIG profile ${r.migProfile} exists on ${on.join(', ')}, none of the allowed models ${allowed.join(' | ')}`);
    }
    if (perNode && !on.some((m) => perNode.has(m) && (!allowed || allowed.includes(m)))) {
      return fail('mig_profile_not_on_model', `MIG profile ${r.migProfile} needs ${on.join(' | ')}; the cluster has none`);
    }
  }
  const t = req.topology;
  if (t) {
    if (!LEVELS.includes(t.level)) return fail('invalid_topology', `topology level must be one of ${LEVELS.join(', ')} (got ${t.level})`);
    if (t.required && t.level === 'node' && replicas > 1 && perNode) {
      const per = r.gpus ?? 0;
      const onModels = r.migProfile ? modelsWithMigProfile(r.migProfile).filter((m) => candidates.includes(m)) : [];
      // most partitions of the profile one node can hold: its GPUs x the profile's partitions per GPU
      const maxNode = r.migProfile ? Math.max(0, ...onModels.map((m) => maxOn([m]) * migProfile(m, r.migProfile!)!.maxPerGpu)) : maxOn(candidates);
      const need = r.migProfile
        ? replicas
        : r.gpus !== undefined
          ? replicas * per
          : (replicas * (r.gpuMilli ?? Math.round((r.gpuFraction ?? 0) * 1000))) / 1000;
      if (need > maxNode) {
        return fail(
          'impossible_topology',
          `${replicas} replicas on one node need ${need} GPU${r.migProfile ? ' slices' : 's'}, but no node has more than ${maxNode}`,
        );
      }
    }
  }
  return { ok: true };
}
