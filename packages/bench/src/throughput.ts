/**
 * Synthetic throughput benchmark: a cluster of N 8-GPU nodes (H100-80GB / A100-80GB; mixed
 * whole, MIG and shared GPUs; 32 nodes per leaf, 8 leaves per spine) and a stream of mixed
 * jobs (whole GPUs, shares, MIG slices, leaf-bound gangs, CPU-only) placed by the production
 * engine (default profile) one arrival at a time, then a batch through runCycle.
 */
import { Engine, runCycle, type ClusterSnapshot, type GpuState, type NodeState, type PendingJob } from '@gantry/scheduler';
import { Rng } from './rng';

export interface ThroughputOptions {
  nodes: number;
  jobs?: number;
  seed: number;
}

export function syntheticCluster(count: number, rng: Rng): ClusterSnapshot {
  const nodes: NodeState[] = [];
  for (let i = 0; i < count; i++) {
    const model = i % 4 === 3 ? 'A100-80GB' : 'H100-80GB';
    const id = `node-${String(i).padStart(5, '0')}`;
    const kind = rng.next();
    const gpus: GpuState[] = Array.from({ length: 8 }, (_, g) => {
      const base: GpuState = {
        id: `${id}/gpu${g}`,
        index: g,
        model,
        nvlinkDomain: g < 4 ? 0 : 1,
        healthy: true,
        schedulable: true,
        mode: 'whole',
        allocated: false,
        sharedMilliUsed: 0,
        mig: [],
      };
      if (kind < 0.15 && g >= 4) {
        base.mode = 'mig';
        base.mig =
          g % 2 === 0
            ? [
                { profile: '3g.40gb', start: 4, size: 4, busy: false },
                { profile: '2g.20gb', start: 2, size: 2, busy: false },
                { profile: '1g.10gb', start: 0, size: 1, busy: false },
                { profile: '1g.10gb', start: 1, size: 1, busy: false },
              ]
            : Array.from({ length: 7 }, (_, s) => ({ profile: '1g.10gb', start: s, size: 1, busy: false }));
      } else if (kind >= 0.15 && kind < 0.3 && g >= 6) base.mode = 'shared';
      return base;
    });
    nodes.push({
      id,
      name: id,
      leaf: `leaf-${Math.floor(i / 32)}`,
      spine: `spine-${Math.floor(i / 256)}`,
      schedulable: true,
      persona: 'container',
      cpuMilli: 192000,
      memoryMiB: 2048 * 1024,
      cpuMilliFree: 192000,
      memoryMiBFree: 2048 * 1024,
      gpus,
    });
  }
  return { nodes };
}

export function syntheticJobs(count: number, rng: Rng): PendingJob[] {
  const jobs: PendingJob[] = [];
  for (let i = 0; i < count; i++) {
    const r = rng.next();
    const cpu = [2000, 4000, 8000, 16000][rng.int(4)]!;
    const job: PendingJob = {
      id: `job-${i}`,
      teamId: `team-${i % 7}`,
      priority: 0,
      createdAtMs: i,
      replicas: 1,
      request: { cpuMilli: cpu, memoryMiB: cpu * 4 },
      topology: { level: 'any', required: false },
    };
    if (r < 0.35) job.request.gpus = 1;
    else if (r < 0.5) job.request.gpus = [2, 4, 8][rng.int(3)]!;
    else if (r < 0.72) job.request.gpuMilli = [100, 250, 300, 500, 700][rng.int(5)]!;
    else if (r < 0.87) job.request.migProfile = ['1g.10gb', '2g.20gb', '3g.40gb'][rng.int(3)]!;
    else if (r < 0.92) {
      job.replicas = [2, 4, 8][rng.int(3)]!;
      job.request.gpus = 8;
      job.topology = { level: 'leaf', required: true };
    } else if (r < 0.95) job.request.gpuModels = ['A100-80GB'];
    if (r >= 0.92 && r < 0.95) job.request.gpus = 1;
    jobs.push(job);
  }
  return jobs;
}

export function runThroughput(o: ThroughputOptions, log: (s: string) => void) {
  const rng = new Rng(o.seed);
  const snapshot = syntheticCluster(o.nodes, rng);
  const count = o.jobs ?? Math.round(o.nodes * 3);
  const jobs = syntheticJobs(count, rng);
  const t0 = process.hrtime.bigint();
  const engine = new Engine(snapshot);
  const tIndex = Number(process.hrtime.bigint() - t0) / 1e9;
  let placedJobs = 0;
  let placedReplicas = 0;
  const t1 = process.hrtime.bigint();
  for (const j of jobs) {
    const r = engine.submit(j);
    if (r.status.code === 'success') {
      placedJobs++;
      placedReplicas += r.replicas.length;
    }
  }
  const tStream = Number(process.hrtime.bigint() - t1) / 1e9;
  log(`stream: ${count} jobs on ${o.nodes} nodes in ${tStream.toFixed(2)} s; ${placedJobs} placed; ${engine.classes.size} distinct node states`);
  // one cycle of a fresh queue on a fresh snapshot (what the worker does)
  const batch = syntheticJobs(Math.min(5000, count), new Rng(o.seed + 1));
  const t2 = process.hrtime.bigint();
  const decision = runCycle(snapshot, batch);
  const tCycle = Number(process.hrtime.bigint() - t2) / 1e9;
  log(`runCycle: ${batch.length} jobs in ${tCycle.toFixed(2)} s; ${decision.placed.length} placed`);
  return {
    nodes: o.nodes,
    gpus: o.nodes * 8,
    jobs: count,
    placedJobs,
    placedReplicas,
    placementsPerSecond: Math.round(placedReplicas / tStream),
    jobsPerSecond: Math.round(count / tStream),
    indexSeconds: round(tIndex),
    cycle: { jobs: batch.length, placed: decision.placed.length, seconds: round(tCycle), jobsPerSecond: Math.round(batch.length / tCycle) },
    peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
  };
}

const round = (x: number) => Math.round(x * 1000) / 1000;
