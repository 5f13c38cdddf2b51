/**
 * Simulated workloads: each job starts (its container start, plus modelLoadSeconds for `inference`), makes `speed` seconds of progress per
 * real second while running, and exits with code 0 when its progress reaches durationSeconds.
 * Suspending freezes progress, waits suspendSeconds for the checkpoint and forgets the job;
 * starting it again with that progress finishes the remainder.
 */
import type { Clock } from '../clock';
import type { JobExitReason, JobLogQuery, JobLogs, StartRequest, WorkloadStatus } from '../types';
import type { GpuClaim, HeldGpuClaim } from './gpu-claims';
import { SimJobLogs, type SimJobLog } from './job-log';
import type { CancelTimer, SimTimers } from './sim-timers';

/** Exit codes of jobs the cluster takes away, as a container runtime would report them. */
export const SIM_EXIT_CODES = {
  /** SIGTERM: evicted by a drain. */
  evicted: 143,
  /** SIGKILL: the node went down under the job. */
  nodeLost: 137,
  /** The CUDA context died with the GPU (a fatal Xid). */
  gpuFault: 1,
} as const;

export interface WorkloadDelays {
  startSeconds: number;
  /** Added to startSeconds for `inference` workloads (model load). */
  modelLoadSeconds?: number;
  suspendSeconds: number;
}

export interface SimWorkloadsDeps {
  clock: Clock;
  timers: SimTimers;
  /** Seconds of progress per real second. */
  speed: number;
  delays: WorkloadDelays;
  onExit(jobId: string, exitCode: number, reason: JobExitReason): void;
}

type Phase = 'starting' | 'running' | 'suspending' | 'exited';

/** How a scripted workload (a burn-in diagnostic) ends: its message, and a failure part way through. */
export interface WorkloadScript {
  /** Seconds of progress after which it fails (exit 1); undefined: it completes. */
  failAtSeconds?: number;
  failMessage?: string;
  passMessage?: string;
}

interface SimJob {
  request: StartRequest;
  claims: GpuClaim[];
  log: SimJobLog;
  phase: Phase;
  /** Progress at `runningSince` (or frozen progress outside `running`). */
  progressBase: number;
  runningSince?: number;
  exitCode?: number;
  exitReason?: JobExitReason;
  message?: string;
  script?: WorkloadScript;
  cancelTimer?: CancelTimer;
  suspension?: Promise<{ checkpoint: string; progressSeconds: number }>;
}

export class SimWorkloads {
  private readonly jobs = new Map<string, SimJob>();
  /**
   * Jobs holding GPUs (starting, running or suspending) by node name: a start checks its claims
   * against the jobs of its own nodes only, not against every job of the cluster.
   */
  private readonly onNode = new Map<string, Set<SimJob>>();
  private readonly jobLogs: SimJobLogs;
  /** Callers waiting for a job to leave `starting` (settled). */
  private readonly startWaiters = new Map<string, Set<() => void>>();

  constructor(private readonly deps: SimWorkloadsDeps) {
    this.jobLogs = new SimJobLogs(deps.speed);
  }

  /** Starting, running or being suspended: the job holds its GPUs. */
  isActive(jobId: string): boolean {
    const job = this.jobs.get(jobId);
    return job !== undefined && job.phase !== 'exited';
  }

  /** Claims on the node of every job that holds GPUs there (what a new claim must not collide with). */
  heldClaimsOn(nodeName: string): HeldGpuClaim[] {
    const out: HeldGpuClaim[] = [];
    for (const job of this.onNode.get(nodeName) ?? []) {
      for (const c of job.claims) if (c.nodeName === nodeName) out.push({ ...c, jobId: job.request.jobId });
    }
    return out;
  }

  /** Claims of jobs making progress right now (what telemetry shows as busy). */
  runningClaims(): GpuClaim[] {
    return this.activeJobs().flatMap(([, job]) => (job.phase === 'running' ? job.claims : []));
  }

  /** Active jobs with a claim on the node (and GPU, when given). */
  jobsOn(nodeName: string, gpuIndex?: number): string[] {
    const out: string[] = [];
    for (const job of this.onNode.get(nodeName) ?? []) {
      if (job.claims.some((c) => c.nodeName === nodeName && (gpuIndex === undefined || c.gpuIndex === gpuIndex))) out.push(job.request.jobId);
    }
    return out;
  }

  /** `startSeconds`: the container start (the driver's choice: image pulled or already on the node); default delays.startSeconds. */
  start(request: StartRequest, claims: GpuClaim[], script?: WorkloadScript, startSeconds = this.deps.delays.startSeconds): void {
    this.forget(request.jobId);
    const log = this.jobLogs.forStart(request);
    log.started(request, claims, this.deps.clock.now());
    const job: SimJob = { request, claims, log, phase: 'starting', progressBase: request.progressSeconds ?? 0, script };
    this.jobs.set(request.jobId, job);
    for (const c of claims) {
      const held = this.onNode.get(c.nodeName) ?? new Set<SimJob>();
      held.add(job);
      this.onNode.set(c.nodeName, held);
    }
    const load = request.kind === 'inference' ? (this.deps.delays.modelLoadSeconds ?? 0) : 0;
    job.cancelTimer = this.deps.timers.after(startSeconds + load, () => this.run(job));
  }

  /** Stops and forgets the job; no-op for an unknown one. */
  stop(jobId: string): void {
    const job = this.jobs.get(jobId);
    if (job && job.phase !== 'exited') {
      this.freeze(job, job.phase);
      job.log.stopped(this.deps.clock.now(), job.progressBase);
    }
    this.forget(jobId);
  }

  /** What the job wrote (kept after it ends); no lines for a job this cluster never ran. */
  logs(jobId: string, query: JobLogQuery = {}): JobLogs {
    const job = this.jobs.get(jobId);
    const log = job?.log ?? this.jobLogs.get(jobId);
    if (!log) return { lines: [], unavailable: [] };
    const progress = job && job.phase === 'running' ? this.progressOf(job) : undefined;
    return log.read(query, this.deps.clock.now(), progress);
  }

  suspend(jobId: string): Promise<{ checkpoint: string; progressSeconds: number }> {
    const job = this.jobs.get(jobId);
    if (!job || job.phase === 'exited') return Promise.reject(new Error(`job ${jobId} is not running`));
    if (job.suspension) return job.suspension;
    this.freeze(job, 'suspending');
    const progressSeconds = job.progressBase;
    job.log.suspending(this.deps.clock.now(), progressSeconds);
    job.suspension = this.deps.timers.sleep(this.deps.delays.suspendSeconds).then(() => {
      if (this.jobs.get(jobId) !== job || job.phase !== 'suspending') {
        throw new Error(`job ${jobId} ended before its checkpoint completed`);
      }
      this.jobs.delete(jobId);
      this.release(job);
      const checkpoint = `sim-checkpoint://${jobId}/${progressSeconds.toFixed(3)}`;
      job.log.checkpointed(this.deps.clock.now(), checkpoint);
      return { checkpoint, progressSeconds };
    });
    return job.suspension;
  }

  /** Ends an active job with a non-zero exit code (evicted, node lost, GPU fault). */
  kill(jobId: string, exitCode: number, reason: JobExitReason): void {
    const job = this.jobs.get(jobId);
    if (job && job.phase !== 'exited') this.exit(job, exitCode, reason);
  }

  /** Resolves once the job is no longer starting (running, stopped, suspending, exited), or after `ms` real milliseconds. */
  settled(jobId: string, ms: number): Promise<void> {
    if (this.jobs.get(jobId)?.phase !== 'starting') return Promise.resolve();
    return new Promise<void>((resolve) => {
      const waiters = this.startWaiters.get(jobId) ?? new Set<() => void>();
      this.startWaiters.set(jobId, waiters);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        if (!waiters.size && this.startWaiters.get(jobId) === waiters) this.startWaiters.delete(jobId);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref?.();
      waiters.add(done);
    });
  }

  private leftStarting(jobId: string): void {
    for (const done of [...(this.startWaiters.get(jobId) ?? [])]) done();
  }

  status(jobId: string): WorkloadStatus {
    const job = this.jobs.get(jobId);
    if (!job) return { state: 'unknown', progressSeconds: 0 };
    if (job.phase === 'exited') {
      const exited: WorkloadStatus = { state: 'exited', progressSeconds: job.progressBase, exitCode: job.exitCode, reason: job.exitReason };
      if (job.message !== undefined) exited.message = job.message;
      return exited;
    }
    const status: WorkloadStatus = { state: 'running', progressSeconds: this.progressOf(job) };
    if (job.phase === 'starting') status.starting = true;
    return status;
  }

  private activeJobs(): [string, SimJob][] {
    return [...this.jobs].filter(([, job]) => job.phase !== 'exited');
  }

  private run(job: SimJob): void {
    job.phase = 'running';
    job.runningSince = this.deps.clock.now();
    job.log.running(job.runningSince, job.progressBase);
    this.leftStarting(job.request.jobId);
    const duration = job.request.durationSeconds;
    const failAt = job.script?.failAtSeconds;
    if (failAt !== undefined && (duration === undefined || failAt < duration)) {
      job.cancelTimer = this.deps.timers.after(Math.max(0, failAt - job.progressBase), () => {
        job.message = job.script?.failMessage;
        this.exit(job, 1, 'failed');
      });
      return;
    }
    if (duration === undefined) return;
    const remaining = duration - job.progressBase;
    if (remaining <= 0) return this.exit(job, 0, 'completed');
    job.cancelTimer = this.deps.timers.after(remaining, () => this.exit(job, 0, 'completed'));
  }

  private exit(job: SimJob, exitCode: number, reason: JobExitReason): void {
    this.freeze(job, 'exited');
    if (reason === 'completed') {
      job.progressBase = job.request.durationSeconds ?? job.progressBase;
      job.message = job.script?.passMessage;
    }
    job.exitCode = exitCode;
    job.exitReason = reason;
    job.log.exited(this.deps.clock.now(), job.progressBase, exitCode, reason);
    this.deps.onExit(job.request.jobId, exitCode, reason);
  }

  /** Stops the clock of a job: cancels its timer and keeps the progress made so far. */
  private freeze(job: SimJob, phase: Phase): void {
    job.cancelTimer?.();
    job.cancelTimer = undefined;
    job.progressBase = this.progressOf(job);
    job.log.paused(this.deps.clock.now(), job.progressBase);
    job.runningSince = undefined;
    job.phase = phase;
    if (phase === 'exited') this.release(job);
    this.leftStarting(job.request.jobId);
  }

  /** The job holds no GPU any more (exited, checkpointed or forgotten). */
  private release(job: SimJob): void {
    for (const c of job.claims) {
      const held = this.onNode.get(c.nodeName);
      if (held?.delete(job) && held.size === 0) this.onNode.delete(c.nodeName);
    }
  }

  private forget(jobId: string): void {
    const job = this.jobs.get(jobId);
    if (!job) return;
    job.cancelTimer?.();
    this.jobs.delete(jobId);
    this.release(job);
    this.leftStarting(jobId);
  }

  private progressOf(job: SimJob): number {
    if (job.phase !== 'running' || job.runningSince === undefined) return job.progressBase;
    const elapsed = ((this.deps.clock.now() - job.runningSince) / 1000) * this.deps.speed;
    const progress = job.progressBase + elapsed;
    const duration = job.request.durationSeconds;
    return duration === undefined ? progress : Math.min(duration, progress);
  }
}
