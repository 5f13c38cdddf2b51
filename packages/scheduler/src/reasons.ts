import type { ReplicaRequest } from './types';

/** 1180 -> "1,180" (locale independent). */
export function formatCount(n: number): string {
  const s = String(Math.trunc(n));
  return s.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** "8 GPUs (H100-80GB)", "0.25 GPU", "MIG 1g.10gb", "CPU only" */
export function describeRequest(r: ReplicaRequest): string {
  const models = r.gpuModels?.length ? ` (${[...r.gpuModels].join(' | ')})` : '';
  if (r.migProfile) return `MIG ${r.migProfile}${models}`;
  if (r.gpuMilli !== undefined && r.gpuMilli > 0 && r.gpuMilli < 1000) return `${r.gpuMilli / 1000} GPU${models}`;
  const g = r.gpus ?? (r.gpuMilli === 1000 ? 1 : 0);
  if (g > 0) return `${g} GPU${g > 1 ? 's' : ''}${models}`;
  return `CPU only (${r.cpuMilli / 1000} CPU, ${r.memoryMiB} MiB)`;
}
