import { Inject, Injectable, Logger } from '@nestjs/common';
import { BURN_IN_KIND, DEFAULT_BURN_IN_IMAGE, defaultBurnInCommand, parseBurnInFindings, type BurnInFinding, type WorkloadStatus } from '@gantry/driver';
import type { Incident } from '@gantry/db';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { CLUSTER_DRIVER, type ClusterDriver } from '../../driver/driver.provider';
import { QueuesService } from '../../queues/queues.service';
import { IncidentsRepository } from '../node-manager/incidents.repository';
import { NodesRepository, type OpsNode } from '../node-manager/nodes.repository';
import { burnInGpus, burnInJobId, burnInPollMs, burnInVerdict, needsBurnIn, nextAfterBurnIn, type BurnInNext } from './burn-in';

const step = (s: string, message: string, extra: { findings?: BurnInFinding[]; durationSeconds?: number } = {}, at = new Date()) => ({
  at: at.toISOString(),
  step: s,
  message,
  ...extra,
});

/** The last burn-in step of a timeline (started, passed, failed, lost or retry). */
function lastBurnInStep(timeline: unknown): string | undefined {
  const steps = Array.isArray(timeline) ? (timeline as { step?: unknown }[]) : [];
  for (let i = steps.length - 1; i >= 0; i--) {
    const s = steps[i]?.step;
    if (typeof s === 'string' && s.startsWith('burn-in-')) return s;
  }
  return undefined;
}

const where = (node: OpsNode, gpus: number[], scope: string) =>
  scope === 'gpu' ? `GPU ${gpus.join(', ')} of ${node.name}` : `${node.name} (GPUs ${gpus.join(', ')})`;

/**
 * Runs the burn-in of the failover loop (rules in burn-in.ts): a diagnostic under load as an
 * ordinary driver workload of kind `burn-in` on the repaired GPU (or every GPU of a rebooted
 * node), while the hardware stays out of scheduling (GPU quarantined, node cordoned), and its
 * verdict on the incident's timeline.
 */
@Injectable()
export class BurnInService {
  private readonly logger = new Logger('burn-in');

  constructor(
    private readonly incidents: IncidentsRepository,
    private readonly nodes: NodesRepository,
    private readonly queues: QueuesService,
    @Inject(CLUSTER_DRIVER) private readonly driver: ClusterDriver,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Whether the incident's repair is verified by a burn-in (configuration and rules in burn-in.ts). */
  required(inc: Pick<Incident, 'scope' | 'remediation' | 'attempts'>): Promise<boolean> {
    return Promise.resolve(needsBurnIn(this.config.burnIn.enabled, inc));
  }

  /** Starts a burn-in on the repaired hardware; the incident waits in state `burn-in`. */
  async start(inc: Incident, node: OpsNode, gpuIndex: number | undefined): Promise<void> {
    const { seconds, level, maxFailures } = this.config.burnIn;
    const gpus = burnInGpus(inc.scope, node.gpus.length, gpuIndex);
    const jobId = burnInJobId(inc.id, Date.now());
    const target = where(node, gpus, inc.scope);
    if (inc.scope === 'node') {
      // back up, but not in service: cordoned (the reason names the remediation, so that a pass uncordons it)
      await this.nodes.setNodeState(
        node.id,
        ['down'],
        { state: 'cordoned', reason: 'burn-in under load (remediation) before it takes work' },
        { type: 'node.cordoned', message: `${node.name} is back up; cordoned for a burn-in under load` },
      );
    }
    // recorded first: a crash before the start leaves a burn-in the next check finds gone, and starts again
    const started = step(
      'burn-in-started',
      `burn-in ${inc.burnInFailures + 1} of at most ${maxFailures}: DCGM diagnostic level ${level} under load for ${seconds} s on ${target}`,
    );
    if (!(await this.incidents.beginBurnIn(inc.id, jobId, new Date(), started))) return;
    await this.driver.start({
      jobId,
      kind: BURN_IN_KIND,
      replicas: [{ replica: 0, nodeName: node.name, gpus: gpus.map((index) => ({ index })) }],
      durationSeconds: seconds,
      image: this.config.burnIn.image ?? DEFAULT_BURN_IN_IMAGE,
      command: this.config.burnIn.command ?? defaultBurnInCommand(level),
    });
    await this.poll(inc.id, jobId);
  }

  /** Looks at the running burn-in; records its verdict and says what the loop does next. */
  async check(inc: Incident, node: OpsNode, gpuIndex: number | undefined): Promise<BurnInNext> {
    const jobId = inc.burnInJobId;
    // a pass whose return to service runs beside this check, or was cut short by a crash: finish it
    if (!jobId && lastBurnInStep(inc.timeline) === 'burn-in-passed') return 'return-to-service';
    const status: WorkloadStatus = jobId
      ? await this.driver.status(jobId).catch(() => ({ state: 'unknown' as const, progressSeconds: 0 }))
      : { state: 'unknown', progressSeconds: 0 };
    const { maxFailures } = this.config.burnIn;
    const { next, failures } = nextAfterBurnIn(burnInVerdict(status), inc.burnInFailures, maxFailures);
    if (next === 'wait') {
      await this.poll(inc.id, jobId!);
      return next;
    }
    const target = where(node, burnInGpus(inc.scope, node.gpus.length, gpuIndex), inc.scope);
    const verdict = this.verdictSteps(next, failures, target, status);
    // one verdict per run, however many checks of it were queued
    if (!(await this.incidents.endBurnIn(inc.id, jobId, verdict.steps, verdict.patch))) return 'wait';
    if (jobId) await this.driver.stop(jobId).catch(() => undefined); // frees the pod / the claim
    if (next === 'needs-attention') this.logger.warn(`incident ${inc.id}: ${target} failed burn-in ${failures} times, needs attention`);
    return next;
  }

  /** The timeline steps and the incident's state after a verdict. */
  private verdictSteps(
    next: Exclude<BurnInNext, 'wait'>,
    failures: number,
    target: string,
    status: WorkloadStatus,
  ): { steps: ReturnType<typeof step>[]; patch: { state?: string; burnInFailures?: number } } {
    const { maxFailures } = this.config.burnIn;
    const findings = parseBurnInFindings(status.message);
    const durationSeconds = Math.round(status.progressSeconds * 10) / 10;
    const failed = findings.filter((f) => f.result === 'fail');
    const said = failed.length
      ? failed.map((f) => `GPU ${f.gpuIndex}: ${f.detail}`).join('; ')
      : `exit code ${status.exitCode ?? '?'}, no per-GPU finding reported`;
    switch (next) {
      case 'return-to-service':
        // stays `burn-in` (without a run) until the loop resolves it: a concurrent check finishes the same return
        return {
          steps: [step('burn-in-passed', `burn-in passed on ${target} after ${durationSeconds} s under load`, { findings, durationSeconds })],
          patch: {},
        };
      case 'repair-and-retry':
        return {
          steps: [
            step('burn-in-failed', `burn-in failed (${failures} of ${maxFailures}) after ${durationSeconds} s: ${said}; repairing again`, {
              findings,
              durationSeconds,
            }),
          ],
          patch: { state: 'remediating', burnInFailures: failures },
        };
      case 'needs-attention':
        return {
          steps: [
            step('burn-in-failed', `burn-in failed (${failures} of ${maxFailures}) after ${durationSeconds} s: ${said}`, { findings, durationSeconds }),
            step(
              'needs-attention',
              `${target} failed burn-in ${failures} times: it stays quarantined. Replace the part, then retry the burn-in or release it (Incidents page)`,
            ),
          ],
          patch: { state: 'needs-attention', burnInFailures: failures },
        };
      case 'start-again':
        return {
          steps: [step('burn-in-lost', `the burn-in did not finish (${status.reason ?? 'the workload is gone'}): validating again before another burn-in`)],
          patch: { state: 'remediating' },
        };
    }
  }

  /** An operator retries the burn-in of an incident that needs attention (the count starts over). */
  async retry(inc: Incident, node: OpsNode, gpuIndex: number | undefined, by: string): Promise<void> {
    await this.incidents.incidentStep(inc.id, [step('burn-in-retry', `${by} asked for another burn-in`)], { burnInFailures: 0, state: 'remediating' });
    await this.start({ ...inc, burnInFailures: 0, state: 'remediating' }, node, gpuIndex);
  }

  private poll(incidentId: string, jobId: string): Promise<void> {
    const delayMs = burnInPollMs(this.config.burnIn.seconds, this.config.driver.simSpeed);
    return this.queues.failover({ action: 'remediate', incidentId }, `burnin-check-${jobId}-${Date.now()}`, { delayMs });
  }
}
