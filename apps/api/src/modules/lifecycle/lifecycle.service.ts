import { Inject, Injectable, Logger } from '@nestjs/common';
import { statusOfMany, stopEach, type ReplicaSpec, type StartRequest } from '@gantry/driver';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { CLUSTER_DRIVER, type ClusterDriver } from '../../driver/driver.provider';
import { QueuesService } from '../../queues/queues.service';
import { crashPoint } from '../../common/crash-points';
import { LifecycleRepository, type ActiveJob, type StartableJob } from './lifecycle.repository';
import { isFailoverExit } from '../failover/fault-classification';
import { StartRefusals } from '../node-manager/start-refusals.service';

/** Removals of ended runs in flight at once, for a driver without stopMany. */
const STOP_PARALLEL = 16;

/** Starts, stops and finishes jobs through the cluster driver. Every step is idempotent. */
@Injectable()
export class LifecycleService {
  private readonly logger = new Logger('lifecycle');

  constructor(
    private readonly repo: LifecycleRepository,
    private readonly queues: QueuesService,
    @Inject(CLUSTER_DRIVER) private readonly driver: ClusterDriver,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly refusals: StartRefusals,
  ) {}

  async start(jobId: string): Promise<void> {
    const job = await this.repo.findWithAllocations(jobId);
    if (!job || job.state !== 'starting') return;
    try {
      await this.driver.start(startRequest(job, job.progressSeconds));
    } catch (e) {
      return this.refused(job, e);
    }
    crashPoint('lifecycle.started');
    const now = new Date();
    if (!(await this.repo.markRunning(job, now))) {
      // Cancelled while starting: make sure nothing keeps running.
      await this.driver.stop(jobId);
    }
  }

  /**
   * start() of the jobs a scheduling cycle placed, together: one read of the jobs and their
   * allocations, one driver.startMany (the driver runs them in parallel, bounded), one
   * statement marking the started ones running. A refusal requeues only its own job. Every
   * step is idempotent, so a retry of the whole message (a refusal that could not be requeued,
   * a crash) starts only what is still starting.
   */
  async startMany(jobIds: string[]): Promise<void> {
    const jobs = (await this.repo.findManyWithAllocations(jobIds)).filter((j) => j.state === 'starting');
    if (!jobs.length) return;
    const outcomes = await this.driver.startMany(jobs.map((j) => startRequest(j, j.progressSeconds)));
    const failures: unknown[] = [];
    const started: string[] = [];
    for (const [i, o] of outcomes.entries()) {
      if (o.ok) started.push(o.jobId);
      else await this.refused(jobs[i]!, o.error).catch((e: unknown) => failures.push(e));
    }
    crashPoint('lifecycle.started');
    const running = await this.repo.markRunningMany(started, new Date());
    // Cancelled while starting: make sure nothing keeps running.
    for (const id of started) if (!running.has(id)) await this.driver.stop(id);
    if (failures.length) throw failures[0];
  }

  /**
   * The cluster refuses this placement (a GPU quarantined, a node down or switching persona,
   * a MIG slice gone since the cycle's snapshot): retrying the same GPUs can never work and
   * would hold them forever. Give them back; the next cycle places the job elsewhere.
   * Those GPUs leave placement until the cluster is re-inventoried (no tight loop onto the same slot).
   */
  private async refused(job: StartableJob, e: unknown): Promise<void> {
    const why = e instanceof Error ? e.message : String(e);
    await this.driver.stop(job.id).catch(() => undefined);
    await this.refusals.refused(
      `job ${job.id}`,
      job.allocations.map((a) => a.gpuId),
      why,
    );
    if (await this.repo.requeueRefused(job, `the cluster refused the placement (${why}); placing it again elsewhere`, new Date())) {
      this.logger.warn(`job ${job.id}: start refused (${why}); requeued`);
      await this.queues.requestSchedule(`job ${job.id} start refused`);
      return;
    }
    throw e;
  }

  async stop(jobId: string): Promise<void> {
    await this.driver.stop(jobId);
  }

  /**
   * Checkpoints a suspending job through the driver and frees its GPUs. A job the driver no
   * longer runs (it never started, or a worker restart lost it) keeps the progress recorded so far.
   */
  async suspend(jobId: string, now = new Date()): Promise<void> {
    const job = await this.repo.findWithAllocations(jobId);
    if (!job || job.state !== 'suspending') return;
    const status = await this.driver.status(jobId);
    // A job that ended on its own is finished; one the cluster took away while the suspend was in
    // flight (node lost, GPU fault, eviction) is suspended with the progress recorded so far.
    if (status.state === 'exited' && !isFailoverExit(status.reason)) return this.exited(jobId, status.exitCode ?? 0);
    let checkpoint: { checkpoint: string | null; progressSeconds: number };
    if (status.state === 'running') {
      checkpoint = await this.driver.suspend(jobId);
      crashPoint('suspend.checkpointed');
    } else {
      const ran = job.runningSince ? ((now.getTime() - job.runningSince.getTime()) / 1000) * this.config.driver.simSpeed : 0;
      checkpoint = {
        checkpoint: job.checkpoint,
        progressSeconds: Math.min(job.durationSeconds ?? Infinity, job.progressSeconds + (status.state === 'unknown' ? ran : 0)),
      };
    }
    if (await this.repo.markSuspended(jobId, checkpoint, new Date())) {
      await this.queues.requestSchedule(`job ${jobId} suspended`);
    }
  }

  /**
   * Records the job's end, then has the driver remove what is left of its run (Kubernetes: the
   * finished pods, which would otherwise pile up on the API server). Only after the end is
   * recorded: a crash in between leaves the pods, and a retry of this message removes them.
   */
  async exited(jobId: string, exitCode: number): Promise<void> {
    const stopFailed = await this.exitedMany([{ jobId, exitCode }]);
    if (stopFailed.length) throw stopFailed[0]!.error;
  }

  /**
   * exited() of the jobs whose exits a worker heard within a few milliseconds: their ends in one
   * statement, one schedule request, then the driver removes the run of every job of the batch
   * that has ended, whoever recorded the end (every worker hears every exit, so the run is removed
   * even when the worker that recorded the end died before removing it). Returns the removals that
   * failed (the caller retries them); a failure to record the ends throws (nothing was recorded).
   */
  async exitedMany(exits: readonly { jobId: string; exitCode: number }[]): Promise<{ jobId: string; error: unknown }[]> {
    const finished = await this.repo.finishMany(exits, new Date());
    if (finished.size) await this.queues.requestSchedule(finished.size === 1 ? `job ${[...finished][0]} finished` : `${finished.size} jobs finished`);
    const others = [...new Set(exits.map((e) => e.jobId))].filter((id) => !finished.has(id));
    const ended = [...finished, ...(await this.repo.ended(others))];
    // one driver call for the batch where the driver has stopMany (the cluster host), else bounded stops
    return stopEach(this.driver, ended, STOP_PARALLEL);
  }

  /**
   * Brings the driver and Postgres back in line after a restart or a lost queue message:
   * starting jobs are started, running jobs the driver lost are re-attached with their
   * progress, jobs the driver saw exit are finished, and pending work gets a cycle.
   * A job placed less than the start grace ago is left to its start message, still queued
   * (sending it again would read and start it twice); at a worker's boot (`everyStart`) every
   * starting job is started again, whatever its age.
   */
  async reconcile(now = new Date(), opts: { everyStart?: boolean } = {}): Promise<void> {
    const running: ActiveJob[] = [];
    for (const job of await this.repo.activeJobs()) {
      if (job.state === 'starting' && !opts.everyStart && job.placedAt && now.getTime() - job.placedAt.getTime() < this.config.startGraceMs) continue;
      if (job.state === 'starting' || job.state === 'suspending') {
        await this.queues.lifecycle({ action: job.state === 'starting' ? 'start' : 'suspend', jobId: job.id });
      } else running.push(job);
    }
    // the driver's view of every running job in one call
    const statuses = await statusOfMany(
      this.driver,
      running.map((j) => j.id),
    );
    const unknown = new Map<string, ActiveJob>();
    for (const [i, job] of running.entries()) {
      const status = statuses[i]!;
      if (status.state === 'exited' && isFailoverExit(status.reason)) {
        // taken away by the cluster (node lost, GPU fault, eviction): failover reschedules it
        await this.queues.failover({ action: 'job-lost', jobId: job.id, exitReason: status.reason, at: Date.now() }, `lost-${job.id}-reconcile`, {
          delayMs: 300,
        });
      } else if (status.state === 'exited') {
        await this.queues.lifecycle({ action: 'exited', jobId: job.id, exitCode: status.exitCode ?? 0 });
      } else if (status.state === 'unknown') unknown.set(job.id, job);
    }
    if (unknown.size) await this.reattach(unknown, now);
    if ((await this.repo.countPending()) > 0) await this.queues.requestSchedule('reconcile');
  }

  /**
   * Running jobs the driver did not know: most ended (and were removed) since the round read
   * them; those still running in Postgres and still unknown to the driver are started again
   * with their progress (a restarted cluster lost them).
   */
  private async reattach(unknown: Map<string, ActiveJob>, now: Date): Promise<void> {
    const still = (await this.repo.findManyWithAllocations([...unknown.keys()])).filter((j) => j.state === 'running');
    const statuses = await statusOfMany(
      this.driver,
      still.map((j) => j.id),
    );
    for (const [i, full] of still.entries()) {
      if (statuses[i]!.state !== 'unknown') continue;
      const job = unknown.get(full.id)!;
      const elapsed = job.runningSince ? ((now.getTime() - job.runningSince.getTime()) / 1000) * this.config.driver.simSpeed : 0;
      this.logger.warn(`re-attaching job ${job.id} the driver did not know (progress ${Math.round(job.progressSeconds + elapsed)} s)`);
      // One job the cluster cannot take back (its MIG slice is being re-applied) must not stop the others.
      await this.driver.start(startRequest(full, job.progressSeconds + elapsed)).catch((e: unknown) => {
        this.logger.warn(`job ${job.id}: re-attach refused (${e instanceof Error ? e.message : String(e)}); tried again next round`);
      });
    }
  }
}

function startRequest(job: StartableJob, progressSeconds: number): StartRequest {
  const replicas = new Map<number, ReplicaSpec>();
  for (const a of job.allocations) {
    const r = replicas.get(a.replica) ?? { replica: a.replica, nodeName: a.node.name, gpus: [] };
    r.gpus.push({
      index: a.gpu.index,
      ...(a.migProfile ? { migProfile: a.migProfile, migStart: a.migStart ?? 0 } : {}),
      ...(a.milli < 1000 && !a.migProfile ? { milli: a.milli } : {}),
    });
    replicas.set(a.replica, r);
  }
  return {
    jobId: job.id,
    kind: job.kind,
    replicas: [...replicas.values()],
    durationSeconds: job.durationSeconds ?? undefined,
    progressSeconds,
    checkpoint: job.checkpoint ?? undefined,
  };
}
