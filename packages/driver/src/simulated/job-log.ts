/**
 * The log of a simulated workload: what a training, batch, notebook, VM, cluster or inference
 * process would print, generated from the workload's own state (its request, where its replicas
 * run, its progress, how each run ended), deterministic per job id (no randomness: the numbers
 * come from a hash of the id). Rank 0 reports progress; every replica reports where it runs.
 */
import type { JobExitReason, JobLogLine, JobLogQuery, JobLogs, StartRequest } from '../types';
import type { GpuClaim } from './gpu-claims';

/** Lines kept per job (the oldest go first), and jobs kept (the least recently started go first). */
export const SIM_LOG_LIMITS = { linesPerJob: 5000, jobs: 2000 } as const;

/** FNV-1a of a string, in [0, 1). */
function unit(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) / 0x1_0000_0000;
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

function gpuText(claim: GpuClaim): string {
  if (claim.kind === 'mig') return `${claim.gpuIndex} (MIG ${claim.profile})`;
  if (claim.kind === 'share') return `${claim.gpuIndex} (${(claim.milli / 10).toFixed(0)}% share)`;
  return String(claim.gpuIndex);
}

interface Run {
  /** When progress last resumed (ms), with the progress then. */
  since: number;
  progressAtSince: number;
}

/** One job's log across its runs (a resume or a restart elsewhere appends to it). */
export class SimJobLog {
  private readonly lines: JobLogLine[] = [];
  private readonly seqs = new Map<number, number>();
  private run?: Run;
  /** The next progress mark (in units of `every`) rank 0 reports. */
  private nextMark = 1;
  /** Seconds of progress between two progress lines. */
  private readonly every: number;
  /** Seconds of work per training step, and per-GPU throughput: this job's own figures. */
  private readonly stepSeconds: number;
  private readonly perGpuRate: number;

  constructor(
    private request: StartRequest,
    private readonly speed: number,
  ) {
    const d = request.durationSeconds;
    this.every = d === undefined ? 10 : clamp(d / 100, 1, 60);
    this.stepSeconds = 0.25 + unit(`${request.jobId}:step`) * 0.75;
    this.perGpuRate = 0.9 + unit(`${request.jobId}:rate`) * 0.2;
  }

  /** A run begins: every replica says where it runs; rank 0 what it resumes from. */
  started(request: StartRequest, claims: readonly GpuClaim[], at: number): void {
    this.request = request;
    this.run = undefined;
    const gpusPerReplica = Math.max(1, ...request.replicas.map((r) => r.gpus.length));
    const world = request.replicas.length * gpusPerReplica;
    this.write(0, at, `starting ${request.kind} workload ${request.jobId}: ${request.replicas.length} replica(s) x ${gpusPerReplica} GPU(s)`);
    for (const replica of request.replicas) {
      const mine = claims.filter((c) => c.nodeName === replica.nodeName && replica.gpus.some((g) => g.index === c.gpuIndex));
      this.write(replica.replica, at, `[rank ${replica.replica}] node ${replica.nodeName}, GPU ${mine.map(gpuText).join(', ') || 'none'}`);
    }
    const progress = request.progressSeconds ?? 0;
    if (request.kind === 'training' && world > 1) this.write(0, at, `torch.distributed: world size ${world}, backend nccl, NCCL_IB_HCA=mlx5`);
    if (progress > 0) {
      const from = request.checkpoint ? `checkpoint ${request.checkpoint}` : 'the last checkpoint';
      this.write(0, at, `resuming from ${from}: ${this.position(progress)}`);
    }
    if (request.kind === 'inference') this.write(0, at, 'loading model weights onto the GPU');
    this.nextMark = Math.floor(progress / this.every) + 1;
  }

  /** The workload starts making progress. */
  running(at: number, progress: number): void {
    this.run = { since: at, progressAtSince: progress };
    this.write(0, at, this.kind === 'inference' ? 'model loaded, serving on :8080' : `${this.kind} loop started at ${this.position(progress)}`);
  }

  /** Progress stops (suspend, stop, exit) at `at` with `progress` made. */
  paused(at: number, progress: number): void {
    this.advance(at, progress);
    this.run = undefined;
  }

  suspending(at: number, progress: number): void {
    this.write(0, at, `SIGTERM received: writing a checkpoint at ${this.position(progress)}`);
  }

  checkpointed(at: number, checkpoint: string): void {
    this.write(0, at, `checkpoint saved to ${checkpoint}; exiting`);
  }

  stopped(at: number, progress: number): void {
    this.write(0, at, `SIGTERM received: stopping at ${this.position(progress)}`);
  }

  exited(at: number, progress: number, exitCode: number, reason: JobExitReason): void {
    switch (reason) {
      case 'completed':
        return this.write(0, at, `${this.kind} finished: ${this.position(progress)}; exit code 0`);
      case 'evicted':
        return this.write(0, at, `SIGTERM received: evicted from its node at ${this.position(progress)}; exit code ${exitCode}`);
      case 'gpu-fault':
        this.write(0, at, 'RuntimeError: CUDA error: unspecified launch failure (the GPU reported an Xid)', 'stderr');
        return this.write(0, at, `exit code ${exitCode} at ${this.position(progress)}`, 'stderr');
      case 'node-lost':
        return; // the node went away: nothing more reaches the log
      case 'failed':
        return this.write(0, at, `exit code ${exitCode} at ${this.position(progress)}`, 'stderr');
    }
  }

  /** Lines written at or after `sinceMs`, the last `tailLines` per replica; progress lines up to `now`. */
  read(query: JobLogQuery, now: number, progressNow: number | undefined): JobLogs {
    if (progressNow !== undefined) this.advance(now, progressNow);
    let lines = query.sinceMs === undefined ? this.lines : this.lines.filter((l) => l.at >= query.sinceMs!);
    if (query.tailLines !== undefined) {
      const keep = query.tailLines;
      const counts = new Map<number, number>();
      lines = [...lines]
        .reverse()
        .filter((l) => {
          const n = (counts.get(l.replica) ?? 0) + 1;
          counts.set(l.replica, n);
          return n <= keep;
        })
        .reverse();
    }
    return { lines: lines.map((l) => ({ ...l })), unavailable: [] };
  }

  /** Rank 0's progress lines for each mark passed since the run began, up to `progress` at `now`. */
  private advance(now: number, progress: number): void {
    const run = this.run;
    if (!run) return;
    while (this.nextMark * this.every <= progress + 1e-9) {
      const p = this.nextMark * this.every;
      const at = Math.min(now, run.since + ((p - run.progressAtSince) / this.speed) * 1000);
      this.write(0, Math.round(at), this.progressLine(p, this.nextMark));
      this.nextMark++;
    }
  }

  private get kind(): string {
    return this.request.kind;
  }

  private get gpus(): number {
    return this.request.replicas.reduce((n, r) => n + r.gpus.length, 0);
  }

  private fraction(progress: number): number | undefined {
    const d = this.request.durationSeconds;
    return d === undefined || d <= 0 ? undefined : Math.min(1, progress / d);
  }

  private position(progress: number): string {
    const f = this.fraction(progress);
    const pct = f === undefined ? '' : ` (${(f * 100).toFixed(1)}%)`;
    if (this.kind === 'training') {
      const total = this.request.durationSeconds === undefined ? '' : `/${Math.floor(this.request.durationSeconds / this.stepSeconds)}`;
      return `step ${Math.floor(progress / this.stepSeconds)}${total}${pct}`;
    }
    return `${progress.toFixed(1)} s of work${pct}`;
  }

  private progressLine(progress: number, mark: number): string {
    const jitter = 1 + (unit(`${this.request.jobId}:${mark}`) - 0.5) * 0.04;
    const gpus = Math.max(1, this.gpus);
    const f = this.fraction(progress) ?? progress / 3600;
    switch (this.kind) {
      case 'training': {
        const loss = (1.6 + 8.8 * Math.exp(-4 * f)) * jitter;
        const lr = 3e-4 * (f < 0.05 ? f / 0.05 : 0.5 * (1 + Math.cos(Math.PI * Math.min(1, f))));
        const tokens = (gpus * 3100 * this.perGpuRate * jitter) / 1000;
        return `${this.position(progress)} | loss ${loss.toFixed(4)} | lr ${lr.toExponential(2)} | ${tokens.toFixed(1)}k tok/s`;
      }
      case 'batch': {
        const rate = gpus * 45 * this.perGpuRate;
        return `processed ${Math.floor(progress * rate)} samples, ${this.position(progress)} | ${(rate * jitter).toFixed(0)} samples/s`;
      }
      case 'inference':
        return `served ${Math.floor(progress * 12 * this.perGpuRate)} requests | p50 ${(38 * jitter).toFixed(1)} ms`;
      case 'notebook':
        return `kernel: cell ${mark} executed in ${(this.every * jitter).toFixed(1)} s | GPU memory ${(60 + 20 * jitter * f).toFixed(0)}%`;
      case 'vm':
        return `guest: up ${progress.toFixed(0)} s, ${gpus} passthrough GPU(s) healthy`;
      default:
        return `ray: ${this.request.replicas.length} node(s), ${gpus} GPU(s) alive | ${Math.floor(progress * 4 * this.perGpuRate)} tasks done`;
    }
  }

  private write(replica: number, at: number, text: string, stream: JobLogLine['stream'] = 'stdout'): void {
    const seq = (this.seqs.get(replica) ?? 0) + 1;
    this.seqs.set(replica, seq);
    this.lines.push({ at, replica, seq, stream, text });
    if (this.lines.length > SIM_LOG_LIMITS.linesPerJob) this.lines.splice(0, this.lines.length - SIM_LOG_LIMITS.linesPerJob);
  }
}

/** The logs of every job the simulated cluster ran, kept after the job ends (bounded). */
export class SimJobLogs {
  private readonly logs = new Map<string, SimJobLog>();

  constructor(private readonly speed: number) {}

  /** The job's log, created at its first start (a later start appends to the same log). */
  forStart(request: StartRequest): SimJobLog {
    let log = this.logs.get(request.jobId);
    if (log) this.logs.delete(request.jobId);
    else log = new SimJobLog(request, this.speed);
    this.logs.set(request.jobId, log);
    while (this.logs.size > SIM_LOG_LIMITS.jobs) this.logs.delete(this.logs.keys().next().value as string);
    return log;
  }

  get(jobId: string): SimJobLog | undefined {
    return this.logs.get(jobId);
  }
}
