import { Inject, Injectable, Logger } from '@nestjs/common';
import type { ReplicaSpec } from '@gantry/driver';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { RedisService } from '../../common/redis.service';
import { CLUSTER_DRIVER, type ClusterDriver } from '../../driver/driver.provider';
import { QueuesService } from '../../queues/queues.service';
import { decide } from './autoscaler';
import { EndpointReplicasRepository, type LiveEndpoint } from './endpoint-replicas.repository';
import { EndpointTraffic } from './endpoint-traffic.service';
import { ReplicaReadiness } from './replica-readiness.service';
import { StartRefusals } from '../node-manager/start-refusals.service';

/** How long a replica may take to load before the worker gives up on it (real seconds). */
const READY_TIMEOUT_MS = 10 * 60_000;
/** Between status() reads of a driver that cannot tell when a start ends. */
const READY_POLL_MS = 25;
/** One wait of a driver that can (untilStarted): bounded, so that the deadline and a shutdown are seen. */
const READY_WAIT_MS = 1000;
/** A replica still `starting` after this long has lost its start message (worker restart): start it again. */
const RESTART_STALE_MS = 30_000;

export interface AutoscaleReport {
  endpoints: number;
  changed: number;
  started: number;
  stopped: number;
}

/**
 * The worker side of endpoints: the autoscale tick (Knative maths over Redis traffic, then
 * replicas brought in line: warm replicas promoted, extra ones demoted or stopped, missing
 * ones left to the scheduling cycle) and the start of a placed replica through the driver.
 */
@Injectable()
export class AutoscalerService {
  private readonly logger = new Logger('autoscaler');

  constructor(
    private readonly repo: EndpointReplicasRepository,
    private readonly traffic: EndpointTraffic,
    private readonly queues: QueuesService,
    private readonly redis: RedisService,
    @Inject(CLUSTER_DRIVER) private readonly driver: ClusterDriver,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly refusals: StartRefusals,
    private readonly readiness: ReplicaReadiness,
  ) {}

  async tick(nowMs = Date.now()): Promise<AutoscaleReport> {
    const report: AutoscaleReport = { endpoints: 0, changed: 0, started: 0, stopped: 0 };
    const lock = `${this.config.queuePrefix}:autoscale:lock`;
    if ((await this.redis.client.set(lock, '1', 'PX', 10_000, 'NX')) !== 'OK') return report;
    try {
      let needSchedule = false;
      for (const ep of await this.repo.liveEndpoints()) {
        report.endpoints++;
        needSchedule = (await this.scaleOne(ep, nowMs, report)) || needSchedule;
      }
      if (needSchedule) await this.queues.requestSchedule('endpoint replicas wanted');
      return report;
    } finally {
      await this.redis.client.del(lock);
    }
  }

  /** One endpoint: decide, then bring its replicas in line. True when replicas are missing. */
  private async scaleOne(ep: LiveEndpoint, nowMs: number, report: AutoscaleReport): Promise<boolean> {
    if (ep.deletedAt) {
      for (const r of ep.replicas) report.stopped += Number(await this.stop(r.id));
      return false;
    }
    await this.dropLostReplicas(ep, nowMs, report);
    const replicas = ep.replicas.filter((r) => r.endedAt === null);
    const samples = await this.traffic.samples(ep.id, nowMs);
    const lastTraffic = [...samples].reverse().find((s) => s.rps > 0);
    const manualActive = ep.manualUntil !== null && ep.manualUntil.getTime() > nowMs && ep.manualReplicas !== null;
    if (!manualActive && ep.manualReplicas !== null) await this.repo.clearManual(ep.id);
    const lastActivityMs = Math.max(
      ep.createdAt.getTime(),
      ep.lastRequestAt?.getTime() ?? 0,
      lastTraffic ? lastTraffic.t * 1000 + 999 : 0,
      manualActive ? nowMs : 0,
    );
    const [prev, held] = await Promise.all([this.traffic.state(ep.id), this.traffic.held(ep.id)]);
    const ready = replicas.filter((r) => r.serving && r.state === 'ready').length;
    const d = decide(
      {
        targetConcurrency: ep.targetConcurrency,
        minReplicas: ep.minReplicas,
        maxReplicas: ep.maxReplicas,
        scaleToZeroAfterSeconds: ep.scaleToZeroAfterSeconds,
      },
      {
        nowMs,
        samples,
        readyReplicas: ready,
        currentDesired: ep.desiredReplicas,
        panicSinceMs: prev?.panicSinceMs ?? null,
        lastActivityMs,
        heldRequests: held,
        ...(manualActive ? { manualFloor: ep.manualReplicas! } : {}),
      },
    );
    await this.traffic.setState(ep.id, {
      panicSinceMs: d.panicSinceMs,
      panic: d.panic,
      observedConcurrency: d.observedStableConcurrency,
      observedRps: d.observedStableRps,
      recommended: d.desired,
      reason: d.reason,
    });
    if (d.desired !== ep.desiredReplicas) {
      // Guarded by the version: an activator or a manual scale meanwhile wins; next tick decides again.
      if (!(await this.repo.setDesired(ep.id, d.desired, ep.version))) return false;
      report.changed++;
      this.logger.log(`endpoint ${ep.name}: ${ep.desiredReplicas} -> ${d.desired} replicas (${d.reason})`);
    }
    return this.reconcileReplicas(ep.id, replicas, d.desired, ep.warmPool, report);
  }

  /**
   * Serving replicas to `desired`, warm-pool replicas to `warmPool`: warm ones are promoted
   * first (no model load), extra serving ones go back to the warm pool while it has room,
   * the rest are stopped (starting ones first, then the newest). True when replicas are missing.
   */
  private async reconcileReplicas(
    endpointId: string,
    replicas: LiveEndpoint['replicas'],
    desired: number,
    warmPool: number,
    report: AutoscaleReport,
  ): Promise<boolean> {
    let serving = replicas.filter((r) => r.serving);
    let warm = replicas.filter((r) => !r.serving).sort((a, b) => rank(a) - rank(b));
    while (serving.length < desired && warm.length) {
      const w = warm.shift()!;
      if (await this.repo.setServing(w.id, true)) {
        serving.push(w);
        if (w.state === 'ready') await this.readiness.announce(endpointId);
      }
    }
    const byStopOrder = (a: (typeof replicas)[number], b: (typeof replicas)[number]) => rank(b) - rank(a) || b.replica - a.replica;
    serving = serving.sort(byStopOrder);
    while (serving.length > desired) {
      const s = serving.shift()!;
      if (s.state === 'ready' && warm.length < warmPool) {
        if (await this.repo.setServing(s.id, false)) warm.push(s);
      } else {
        report.stopped += Number(await this.stop(s.id));
      }
    }
    warm = warm.sort(byStopOrder);
    while (warm.length > warmPool) report.stopped += Number(await this.stop(warm.shift()!.id));
    return serving.length + warm.length < desired + warmPool;
  }

  /** Ready replicas the driver no longer runs (node lost, worker restart) are released; stale starts are retried. */
  private async dropLostReplicas(ep: LiveEndpoint, nowMs: number, report: AutoscaleReport): Promise<void> {
    for (const r of ep.replicas) {
      if (r.state === 'starting') {
        if (nowMs - r.createdAt.getTime() > RESTART_STALE_MS) await this.queues.autoscale({ action: 'start', replicaId: r.id });
        continue;
      }
      const status = await this.driver.status(r.id);
      if (status.state !== 'running') {
        this.logger.warn(`endpoint ${ep.name} replica ${r.replica} is ${status.state} on the cluster: releasing it`);
        if (await this.repo.stopReplica(r.id, new Date(nowMs))) {
          report.stopped++;
          r.endedAt = new Date(nowMs);
        }
      }
    }
  }

  /**
   * Starts a placed replica through the driver (kind `inference`: the simulated driver adds
   * the model-load time) and marks it ready once the driver says it serves.
   */
  async start(replicaId: string): Promise<void> {
    const rep = await this.repo.startingReplica(replicaId);
    if (!rep) return;
    const allocs = rep.allocations;
    const spec: ReplicaSpec = { replica: rep.replica, nodeName: allocs[0]!.nodeName, gpus: [] };
    for (const a of allocs) {
      spec.gpus.push({
        index: a.gpuIndex,
        ...(a.migProfile ? { migProfile: a.migProfile, migStart: a.migStart ?? 0 } : {}),
        ...(a.milli < 1000 && !a.migProfile ? { milli: a.milli } : {}),
      });
    }
    try {
      await this.driver.start({ jobId: rep.id, kind: 'inference', replicas: [spec] });
    } catch (e) {
      // The cluster refused the placement (e.g. Postgres and the cluster disagree on a MIG layout):
      // release the slots so that the next cycle places the replica again, and say why.
      const message = e instanceof Error ? e.message : String(e);
      this.logger.warn(`endpoint replica ${rep.id} could not start: ${message}`);
      await this.traffic.setReasons(rep.endpointId, [{ code: 'start_failed', message: `a replica could not start on ${spec.nodeName}: ${message}` }]);
      await this.refusals.refused(
        `endpoint replica ${rep.id}`,
        allocs.map((a) => a.gpuId),
        message,
      );
      await this.stop(rep.id);
      return;
    }
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      // a driver that tells when a start ends is waited on (woken at once); others are polled
      const s = this.driver.untilStarted ? await this.driver.untilStarted(rep.id, READY_WAIT_MS) : await this.driver.status(rep.id);
      if (s.state === 'running' && !s.starting) break;
      if (s.state !== 'running' || Date.now() > deadline) {
        this.logger.warn(`endpoint replica ${rep.id} did not become ready (${s.state}): releasing it`);
        await this.stop(rep.id);
        await this.queues.requestSchedule('endpoint replica failed to start');
        return;
      }
      if (!this.driver.untilStarted) await new Promise((r) => setTimeout(r, READY_POLL_MS));
    }
    if (!(await this.repo.markReady(rep.id, new Date()))) await this.driver.stop(rep.id);
    // (a warm-pool replica too: it may have been promoted while it loaded)
    else await this.readiness.announce(rep.endpointId);
  }

  private async stop(replicaId: string): Promise<boolean> {
    await this.driver.stop(replicaId);
    const stopped = await this.repo.stopReplica(replicaId, new Date());
    if (stopped) await this.queues.requestSchedule('endpoint replica stopped');
    return stopped;
  }
}

/** Ready replicas before starting ones (a warm ready replica serves at once). */
const rank = (r: { state: string }) => (r.state === 'ready' ? 0 : 1);
