/**
 * Filter plugins (and the request PreFilter): node-ready, persona, node-resources (CPU, memory),
 * gpu-model, gpu-capacity (whole GPUs / share / free MIG slice; it also lists the device
 * options the score plugins compare). Filters read only the node's state (the engine caches
 * their verdict per node class).
 */
import { type CycleState, type FilterPlugin, type PreFilterPlugin, SUCCESS, unresolvable, unschedulable } from '../framework';
import type { PendingJob, Status } from '../types';
import { validateRequest } from '../validate-request';
import type { EngineHandle } from '../views';

const NODE_DOWN = unschedulable('node_unschedulable', 'node cordoned, draining or down');
const NO_CPU = unschedulable('insufficient_cpu', 'not enough free CPU');
const NO_MEM = unschedulable('insufficient_memory', 'not enough free memory');
const MODEL = unschedulable('gpu_model_not_allowed', 'GPU model not allowed');
const NO_GPU = unschedulable('no_healthy_gpu', 'no healthy schedulable GPU');
const NO_WHOLE = unschedulable('insufficient_gpus', 'not enough free whole GPUs');
const NO_SHARE = unschedulable('insufficient_gpu_share', 'not enough free GPU share');
const personaStatus = new Map<string, Status>();

export function requestCheck(engine: EngineHandle): PreFilterPlugin {
  const cache = new Map<string, Status>();
  return {
    name: 'request',
    preFilter(state: CycleState, job: PendingJob): Status {
      // the verdict depends only on the request shape, replicas and topology: computed once per shape
      const key = `${state.job.shapeId}|${job.replicas}|${job.topology.level}|${job.topology.required}|${job.request.gpuModels?.join(',') ?? ''}`;
      let s = cache.get(key);
      if (!s) {
        const r = validateRequest({ replicas: job.replicas, request: job.request, topology: job.topology }, engine.inventory);
        s = r.ok ? SUCCESS : unresolvable(r.code, r.message);
        cache.set(key, s);
      }
      return s;
    },
  };
}

export const nodeReady: FilterPlugin = {
  name: 'node-ready',
  filter: (_s, _j, n) => (n.schedulable ? SUCCESS : NODE_DOWN),
};

export const persona: FilterPlugin = {
  name: 'persona',
  filter(_s, job, n) {
    if (n.persona === job.persona) return SUCCESS;
    const key = `${job.persona}/${n.persona}`;
    let s = personaStatus.get(key);
    if (!s) personaStatus.set(key, (s = unschedulable('persona_mismatch', `node persona is ${n.persona}, job needs ${job.persona}`)));
    return s;
  },
};

export const nodeResources: FilterPlugin = {
  name: 'node-resources',
  filter: (_s, job, n) => (n.cpuFree < job.cpu ? NO_CPU : n.memFree < job.mem ? NO_MEM : SUCCESS),
};

export const gpuModel: FilterPlugin = {
  name: 'gpu-model',
  filter(_s, job, n) {
    if (job.kind === 'none') return SUCCESS;
    let healthy = false;
    for (let i = 0; i < n.gpus.length; i++) {
      const g = n.gpus[i]!;
      if (!g.usable) continue;
      healthy = true;
      if (!job.models || job.models.has(g.model)) return SUCCESS;
    }
    return healthy ? MODEL : NO_GPU;
  },
};

export function gpuCapacity(engine: EngineHandle): FilterPlugin {
  const migStatus = new Map<string, Status>();
  return {
    name: 'gpu-capacity',
    filter(state, job, n) {
      const options = engine.deviceOptions(job, n);
      state.options = options;
      if (options.length > 0) return SUCCESS;
      if (job.kind === 'whole') return NO_WHOLE;
      if (job.kind === 'share') return NO_SHARE;
      const p = job.migProfile ?? '';
      let s = migStatus.get(p);
      if (!s) migStatus.set(p, (s = unschedulable('no_free_mig_slice', `no free MIG ${p} slice`)));
      return s;
    },
  };
}
