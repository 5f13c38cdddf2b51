/**
 * Workloads for the planner: jobs with an arrival time and a run time. From an openb pod list
 * (creation, scheduled and deletion times), from a generator, or built by the caller (the
 * cluster's own job history).
 */
import type { ReplicaRequest } from '@gantry/scheduler';
import { gpuPowerSpec } from '@gantry/contracts';
import { Problems, parseCsv } from './input-error';
import { mulberry32 } from './rng';

export interface PlannerJob {
  id: string;
  teamId: string;
  /** Seconds from the start of the workload. */
  arrival: number;
  /** Seconds of work once placed. */
  duration: number;
  replicas: number;
  request: ReplicaRequest;
  priority: number;
}

const TRACE_COLUMNS = ['name', 'cpu_milli', 'memory_mib', 'num_gpu', 'gpu_milli', 'creation_time', 'deletion_time'] as const;

function intField(p: Problems, row: number, r: Record<string, string>, field: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const v = r[field] ?? '';
  if (!/^-?\d+$/.test(v)) {
    p.add(row, field, v === '' ? 'is empty' : `is not an integer: ${JSON.stringify(v.slice(0, 40))}`);
    return Number.NaN;
  }
  const n = Number(v);
  if (n < min || n > max) p.add(row, field, `is ${n}, must be ${max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `${min}..${max}`}`);
  return n;
}

/**
 * Parses an openb pod list (docs/openb.md). Arrival = creation_time; run time = deletion_time -
 * scheduled_time (creation_time when there is no scheduled_time: the time the trace saw it
 * queued is not work). Times are shifted so the first arrival is 0. CPU-only pods are kept (they
 * take CPU and memory on GPU nodes, as in the trace).
 */
export function parseOpenbTrace(text: string, source = 'trace'): PlannerJob[] {
  const { head, rows } = parseCsv(text, source, TRACE_COLUMNS);
  const hasScheduled = head.includes('scheduled_time');
  const p = new Problems(source);
  const jobs: PlannerJob[] = [];
  rows.forEach((r, i) => {
    if (p.full) return;
    const row = i + 1;
    const name = r.name ?? '';
    if (!name) p.add(row, 'name', 'is empty');
    const cpu = intField(p, row, r, 'cpu_milli', 0);
    const mem = intField(p, row, r, 'memory_mib', 0);
    const numGpu = intField(p, row, r, 'num_gpu', 0, 64);
    const milli = intField(p, row, r, 'gpu_milli', 0, 1000);
    const created = intField(p, row, r, 'creation_time', 0);
    const deleted = intField(p, row, r, 'deletion_time', 0);
    const scheduled = hasScheduled && r.scheduled_time ? intField(p, row, r, 'scheduled_time', 0) : created;
    const start = Number.isFinite(scheduled) ? scheduled : created;
    if (Number.isFinite(deleted) && Number.isFinite(start) && deleted < start)
      p.add(
        row,
        'deletion_time',
        `is before ${hasScheduled && r.scheduled_time ? 'scheduled_time' : 'creation_time'} (negative duration ${deleted - start} s)`,
      );
    if (numGpu > 1 && milli > 0 && milli < 1000) p.add(row, 'gpu_milli', `is ${milli} with num_gpu ${numGpu}: a share is of one GPU`);
    if (numGpu > 0 && milli === 0) p.add(row, 'gpu_milli', `is 0 with num_gpu ${numGpu}`);
    const spec = (r.gpu_spec ?? '').split('|').filter(Boolean);
    for (const m of spec) if (!gpuPowerSpec(m)) p.add(row, 'gpu_spec', `unknown GPU model ${JSON.stringify(m)}`);
    const request: ReplicaRequest = { cpuMilli: cpu, memoryMiB: mem };
    if (numGpu > 0 && milli >= 1000) request.gpus = numGpu;
    else if (numGpu > 0 && milli > 0) request.gpuMilli = milli;
    if (spec.length) request.gpuModels = spec;
    jobs.push({ id: name, teamId: 'trace', arrival: created, duration: deleted - start, replicas: 1, request, priority: 0 });
  });
  p.throwIfAny();
  if (jobs.length === 0) new Problems(source).throwIfAny();
  const t0 = Math.min(...jobs.map((j) => j.arrival));
  for (const j of jobs) j.arrival -= t0;
  return jobs.sort((a, b) => a.arrival - b.arrival || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Compresses (factor > 1) or stretches the arrival times: the same jobs, offered faster or slower. */
export function scaleArrivals(jobs: PlannerJob[], factor: number): PlannerJob[] {
  return jobs.map((j) => ({ ...j, arrival: j.arrival / factor }));
}

export interface GeneratorOptions {
  jobs: number;
  /** Mean seconds between arrivals (exponential). */
  meanInterarrival: number;
  /** Mean run time (exponential), seconds. */
  meanDuration: number;
  /** Shares of each request kind (normalised). */
  mix: { share: number; whole: number; multi: number };
  /** GPU models a job may use (empty: any). */
  gpuModels?: string[];
  seed: number;
}

/** A seeded synthetic workload (mulberry32): shares of 0.1..0.9 GPU, single GPUs, 2..8 GPUs. */
export function generateWorkload(o: GeneratorOptions): PlannerJob[] {
  const rand = mulberry32(o.seed);
  const exp = (mean: number) => -Math.log(1 - rand()) * mean;
  const total = o.mix.share + o.mix.whole + o.mix.multi || 1;
  const jobs: PlannerJob[] = [];
  let t = 0;
  for (let i = 0; i < o.jobs; i++) {
    const u = rand() * total;
    const request: ReplicaRequest =
      u < o.mix.share
        ? { gpuMilli: 100 * (1 + Math.floor(rand() * 9)), cpuMilli: 4000, memoryMiB: 16384 }
        : u < o.mix.share + o.mix.whole
          ? { gpus: 1, cpuMilli: 8000, memoryMiB: 32768 }
          : { gpus: [2, 4, 8][Math.floor(rand() * 3)]!, cpuMilli: 16000, memoryMiB: 65536 };
    if (o.gpuModels?.length) request.gpuModels = [...o.gpuModels];
    jobs.push({
      id: `gen-${String(i).padStart(6, '0')}`,
      teamId: 'generated',
      arrival: Math.round(t),
      duration: Math.max(1, Math.round(exp(o.meanDuration))),
      replicas: 1,
      request,
      priority: 0,
    });
    t += exp(o.meanInterarrival);
  }
  return jobs;
}
