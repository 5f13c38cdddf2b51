import { Inject, Injectable, Logger } from '@nestjs/common';
import type { FaultInjection, InventoryNode } from '@gantry/driver';
import { CLUSTER_DRIVER, type ClusterDriver } from '../../driver/driver.provider';
import { QueuesService } from '../../queues/queues.service';
import { crashPoint } from '../../common/crash-points';
import type { QueuePayload } from '../../queues/queue-names';
import { RetryLater } from '../../queues/retry-later';
import { NodesRepository, type OpsNode } from '../node-manager/nodes.repository';
import { NodeJobsRepository, type ActiveJob } from '../node-manager/node-jobs.repository';
import { IncidentsRepository } from '../node-manager/incidents.repository';
import { JobMover } from '../node-manager/job-mover.service';
import { classifyNicDown, classifyNodeDown, classifyXid, type FaultClass } from './fault-classification';
import { MetricsRecorder } from '../metrics/metrics.recorder';
import { BurnInService } from './burn-in.service';

type FaultPayload = QueuePayload<'failover'>;

const step = (s: string, message: string, at = new Date()) => ({ at: at.toISOString(), step: s, message });

/**
 * The failover loop (docs/design.md section 5, docs/reference/gpu.md section 3): classify a health event,
 * cordon (quarantine the GPU or the node), drain (checkpoint where the job still runs), return
 * the affected jobs to the queue as whole gangs, remediate (GPU reset, node reboot), validate
 * against the driver and uncordon. Each fault is an Incident with a timeline and its MTTR.
 * Every step is idempotent: state checks before acting, one open incident per fault and target.
 */
@Injectable()
export class FailoverService {
  private readonly logger = new Logger('failover');

  constructor(
    private readonly nodes: NodesRepository,
    private readonly nodeJobs: NodeJobsRepository,
    private readonly incidents: IncidentsRepository,
    private readonly queues: QueuesService,
    private readonly mover: JobMover,
    @Inject(CLUSTER_DRIVER) private readonly driver: ClusterDriver,
    private readonly metrics: MetricsRecorder,
    private readonly burnIn: BurnInService,
  ) {}

  async handle(p: FaultPayload): Promise<void> {
    switch (p.action) {
      case 'inject':
        return this.inject(p);
      case 'fault':
        return this.fault(p);
      case 'job-lost':
        return this.jobLost(p.jobId!, p.exitReason ?? 'node-lost', p.at ?? Date.now());
      case 'remediate':
        return this.remediate(p.incidentId!);
      case 'retry-burn-in':
      case 'release':
        return this.operatorAnswer(p.action, p.incidentId!, p.source ?? 'an operator');
      default: {
        const never: never = p.action;
        throw new Error(`unknown failover action ${String(never)}`);
      }
    }
  }

  /** `POST /v1/sim/faults`, run where the simulated cluster lives (the worker). */
  private async inject(p: FaultPayload): Promise<void> {
    if (!this.driver.injectFault) throw new Error(`the ${this.driver.name} driver cannot inject faults`);
    const fault: FaultInjection = { nodeName: p.nodeName!, kind: p.kind as FaultInjection['kind'], gpuIndex: p.gpuIndex, xid: p.xid };
    await this.driver.injectFault(fault);
  }

  private async fault(p: FaultPayload): Promise<void> {
    const node = await this.nodes.findNode(p.nodeName!);
    if (!node) return this.logger.warn(`health event for unknown node ${p.nodeName}`);
    const at = new Date(p.at ?? Date.now());
    switch (p.kind) {
      case 'node-down':
        // A node powered off (or powering, or whose power changed since) is silent on purpose (docs/power.md).
        if (node.powerState !== 'on' || (node.powerChangedAt && node.powerChangedAt.getTime() >= at.getTime() - 1000)) {
          return this.logger.log(`${node.name}: node-down ignored, its power is ${node.powerState.replace('_', '-')} (power management)`);
        }
        return this.nodeDown(node, at, p.source === 'heartbeat' ? 'heartbeat' : 'event');
      case 'xid':
        return this.xid(node, p.gpuIndex ?? 0, p.xid ?? 79, at);
      case 'nic-down':
        return this.nicDown(node, at);
      case 'node-up':
      case 'nic-up':
      case 'recover':
        return this.recovered(node, p.kind);
      default:
        throw new Error(`unknown fault kind ${String(p.kind)}`);
    }
  }

  private async nodeDown(node: OpsNode, at: Date, source: 'event' | 'heartbeat'): Promise<void> {
    const cls = classifyNodeDown(source);
    const inc = await this.open(cls, `node-down:${node.id}`, node, null, at, `${node.name}: ${cls.summary}`);
    const cordoned = await this.nodes.setNodeState(
      node.id,
      ['ready', 'cordoned', 'draining', 'switching'],
      {
        state: 'down',
        reason: source === 'heartbeat' ? 'no heartbeat past the grace period' : 'node down',
        transitionStartedAt: null,
        transitionEtaAt: null,
        personaTarget: null,
      },
      {
        type: 'node.down',
        message: `${node.name} is down (${source === 'heartbeat' ? 'missed heartbeats' : 'driver event'}); cordoned, its jobs go back to the queue`,
      },
    );
    if (cordoned) await this.incidents.incidentStep(inc, [step('cordoned', `${node.name} taken out of scheduling (state down)`)]);
    await this.driver.cordon(node.name).catch(() => undefined);
    crashPoint('failover.cordoned');
    await this.moveJobs(inc, await this.nodeJobs.activeJobsOn({ nodeId: node.id }), cls, {
      code: 'node_down',
      message: `node ${node.name} went down: rescheduling on healthy nodes`,
    });
    crashPoint('failover.requeued');
    await this.queues.failover({ action: 'remediate', incidentId: inc }, `remediate-${inc}-0`);
  }

  private async xid(node: OpsNode, gpuIndex: number, xid: number, at: Date): Promise<void> {
    const gpu = node.gpus.find((g) => g.index === gpuIndex);
    if (!gpu) return this.logger.warn(`Xid ${xid} on unknown GPU ${gpuIndex} of ${node.name}`);
    const cls = classifyXid(xid);
    const where = `${node.name} GPU ${gpuIndex}`;
    if (cls.scope === 'none') {
      // Application fault: restart the job only; the GPU stays in service.
      const inc = await this.open(cls, `xid-app:${gpu.id}:${at.getTime()}`, node, gpu.id, at, `${where}: ${cls.summary}`, xid);
      const jobs = await this.nodeJobs.activeJobsOn({ nodeId: node.id, gpuId: gpu.id });
      await this.moveJobs(inc, jobs, cls, { code: 'application_fault', message: `Xid ${xid} (application fault) on ${where}: restarting the job` });
      await this.incidents.resolveIncident(
        inc,
        step('resolved', `no hardware action: ${where} stays in service${jobs.length ? `; ${jobs.length} job(s) restarted` : ''}`),
        new Date(),
      );
      return;
    }
    const inc = await this.open(cls, `gpu:${gpu.id}`, node, gpu.id, at, `${where}: ${cls.summary}`, xid);
    const quarantined = await this.nodes.setGpuHealth(gpu.id, cls.gpuHealth!, {
      nodeId: node.id,
      type: 'gpu.quarantined',
      message: `${where}: Xid ${xid}, GPU ${cls.gpuHealth} and out of scheduling`,
      data: { gpuId: gpu.id, xid },
    });
    if (quarantined) await this.incidents.incidentStep(inc, [step('quarantined', `${where} marked ${cls.gpuHealth}: no new work lands on it`)]);
    crashPoint('failover.cordoned');
    const jobs = await this.nodeJobs.activeJobsOn({ nodeId: node.id, gpuId: gpu.id });
    await this.moveJobs(inc, jobs, cls, { code: 'gpu_fault', message: `Xid ${xid} on ${where}: rescheduling on healthy GPUs` });
    crashPoint('failover.requeued');
    await this.queues.failover({ action: 'remediate', incidentId: inc }, `remediate-${inc}-0`);
  }

  private async nicDown(node: OpsNode, at: Date): Promise<void> {
    const cls = classifyNicDown();
    const inc = await this.open(cls, `nic:${node.id}`, node, null, at, `${node.name}: ${cls.summary}`);
    const cordoned = await this.nodes.setNodeState(
      node.id,
      ['ready'],
      { state: 'cordoned', reason: 'NIC down: no multi-node work until the link is back' },
      {
        type: 'node.cordoned',
        message: `${node.name}: network interface down; cordoned`,
      },
    );
    if (cordoned) await this.incidents.incidentStep(inc, [step('cordoned', `${node.name} cordoned: its network cannot carry multi-node (NCCL) traffic`)]);
    await this.driver.cordon(node.name).catch(() => undefined);
    const jobs = (await this.nodeJobs.activeJobsOn({ nodeId: node.id })).filter((j) => j.nodeIds.length > 1);
    await this.moveJobs(inc, jobs, cls, { code: 'nic_down', message: `network of node ${node.name} is down: moving the multi-node gang` });
    await this.incidents.incidentStep(inc, [step('waiting', 'waiting for the link to come back (nic-up), then validate and uncordon')], {
      state: 'remediating',
    });
  }

  /** node-up / nic-up: validate every open incident of the node now. */
  private async recovered(node: OpsNode, kind: string): Promise<void> {
    for (const inc of await this.incidents.openIncidentsOn(node.id)) {
      await this.incidents.incidentStep(inc.id, [step('signal', `${kind} received from ${node.name}`)]);
      await this.queues.failover({ action: 'remediate', incidentId: inc.id }, `remediate-${inc.id}-${kind}-${Date.now()}`);
    }
  }

  /**
   * A job the cluster took away (node lost, GPU fault, eviction). The fault's own event usually
   * got there first and moved it; otherwise contain what the driver reports and requeue it.
   */
  private async jobLost(jobId: string, reason: string, at: number): Promise<void> {
    const job = await this.nodeJobs.findJob(jobId);
    if (!job || !['starting', 'running'].includes(job.state)) return;
    // The loss is about an earlier run when the job was placed again after it (moved already).
    if (job.allocations.some((a) => a.startedAt.getTime() > at)) return;
    const status = await this.driver.status(jobId).catch(() => ({ state: 'unknown' as const }));
    if (status.state === 'running') return;
    for (const nodeId of new Set(job.allocations.map((a) => a.nodeId))) {
      const node = await this.nodes.findNode(nodeId);
      const seen = node && (await this.driver.discoverNode(node.name));
      if (!node || !seen) continue;
      if (seen.ready === false) return this.nodeDown(node, new Date(), 'event');
      for (const a of job.allocations.filter((x) => x.nodeId === nodeId)) {
        const gpu = node.gpus.find((g) => g.id === a.gpuId);
        if (gpu && seen.gpus[gpu.index]?.health === 'unhealthy') return this.xid(node, gpu.index, 79, new Date());
      }
    }
    await this.mover.move([{ ...job, nodeIds: [] }], {
      checkpoint: false,
      code: reason === 'evicted' ? 'evicted' : 'job_lost',
      message: `the cluster took the job away (${reason}): rescheduling`,
    });
  }

  // ---- remediation, validation, uncordon ---------------------------------------------------

  private async remediate(incidentId: string): Promise<void> {
    const inc = await this.incidents.findIncident(incidentId);
    if (!inc || inc.resolvedAt || inc.state === 'needs-attention') return;
    const node = inc.nodeId ? await this.nodes.findNode(inc.nodeId) : null;
    if (!node) return;
    const gpu = inc.gpuId ? node.gpus.find((g) => g.id === inc.gpuId) : undefined;
    await this.markMitigated(inc.id, inc.jobIds);
    if (inc.state === 'burn-in') return this.afterBurnIn(inc.id, node, gpu?.index);
    if (await this.validate(inc.id, inc.kind, node, gpu?.index)) return;
    switch (inc.remediation) {
      case 'wait-nic':
        return; // nothing to do but wait for nic-up
      case 'reset-gpu': {
        if (!gpu) return;
        if (inc.attempts >= 1) {
          await this.incidents.incidentStep(inc.id, [step('escalated', `the reset did not bring GPU ${gpu.index} back: rebooting ${node.name}`)], {
            remediation: 'reboot-node',
          });
          return this.queues.failover({ action: 'remediate', incidentId: inc.id }, `remediate-${inc.id}-reboot`);
        }
        // Jobs still on the GPU: the fault step that should have moved them died (worker killed
        // after the quarantine, its queue job lost with Redis): move them now, then reset.
        const left = await this.nodeJobs.activeJobsOn({ nodeId: node.id, gpuId: gpu.id });
        if (left.length)
          await this.moveJobs(
            inc.id,
            left,
            { checkpoint: false },
            { code: 'gpu_fault', message: `GPU ${gpu.index} of ${node.name} is quarantined: rescheduling on healthy GPUs` },
          );
        if ((await this.nodeJobs.activeJobsOn({ nodeId: node.id, gpuId: gpu.id })).length)
          throw new RetryLater(`GPU ${gpu.index} of ${node.name} still holds work`);
        await this.incidents.incidentStep(inc.id, [step('remediating', `resetting GPU ${gpu.index} of ${node.name}`)], {
          state: 'remediating',
          attempts: inc.attempts + 1,
        });
        if (this.driver.resetGpu) await this.driver.resetGpu(node.name, gpu.index);
        else
          await this.incidents.incidentStep(inc.id, [
            step('waiting', `the ${this.driver.name} driver cannot reset GPUs: waiting for the health source to report it healthy`),
          ]);
        crashPoint('failover.remediating');
        if (!(await this.validate(inc.id, inc.kind, node, gpu.index))) {
          await this.queues.failover({ action: 'remediate', incidentId: inc.id }, `remediate-${inc.id}-after-reset`, { delayMs: 200 });
        }
        return;
      }
      case 'reboot-node': {
        if (inc.attempts >= 3) {
          await this.incidents.failIncident(
            inc.id,
            step('failed', `${node.name} did not come back after ${inc.attempts} remediation attempts: needs an operator`),
          );
          return;
        }
        if (node.state === 'ready') {
          await this.nodes.setNodeState(
            node.id,
            ['ready'],
            { state: 'cordoned', reason: 'cordoned for a reboot (remediation)' },
            { type: 'node.cordoned', message: `${node.name}: cordoned for a reboot` },
          );
          await this.driver.cordon(node.name).catch(() => undefined);
        }
        const jobs = await this.nodeJobs.activeJobsOn({ nodeId: node.id });
        await this.moveJobs(inc.id, jobs, { checkpoint: true } as FaultClass, {
          code: 'node_reboot',
          message: `node ${node.name} reboots to repair a GPU: moving its jobs`,
        });
        await this.incidents.incidentStep(inc.id, [step('remediating', `rebooting ${node.name}`)], { state: 'remediating', attempts: inc.attempts + 1 });
        if (this.driver.rebootNode) await this.driver.rebootNode(node.name);
        else
          await this.incidents.incidentStep(inc.id, [step('waiting', `the ${this.driver.name} driver cannot reboot nodes: waiting for the node to come back`)]);
        crashPoint('failover.remediating');
        if (!(await this.validate(inc.id, inc.kind, node, gpu?.index))) {
          await this.queues.failover({ action: 'remediate', incidentId: inc.id }, `remediate-${inc.id}-after-reboot-${inc.attempts + 1}`, { delayMs: 500 });
        }
        return;
      }
      default:
        return;
    }
  }

  /**
   * Checks the hardware against the driver (an idle health check); when healthy: after a reset
   * or reboot a burn-in under load comes first (BurnInService), otherwise back in service and
   * the incident resolved. True when the check passed.
   */
  private async validate(incidentId: string, kind: string, node: OpsNode, gpuIndex: number | undefined): Promise<boolean> {
    const seen: InventoryNode | undefined = await this.driver.discoverNode(node.name);
    if (!seen || seen.ready === false) return false;
    if (kind === 'nic-down' && seen.networkUp === false) return false;
    if (gpuIndex !== undefined && seen.gpus[gpuIndex]?.health === 'unhealthy') return false;
    if (kind === 'node-down' && seen.gpus.some((g) => g.health === 'unhealthy')) return false;
    const now = new Date();
    const what = `${node.name}${gpuIndex !== undefined ? ` GPU ${gpuIndex}` : ''}`;
    const inc = await this.incidents.findIncident(incidentId);
    if (inc && !inc.resolvedAt && (await this.burnIn.required(inc))) {
      if (inc.state === 'burn-in') return true; // a concurrent step started it
      await this.incidents.incidentStep(incidentId, [
        step('validated', `${what} healthy at idle according to the ${this.driver.name} driver; burn-in under load next`, now),
      ]);
      await this.burnIn.start(inc, node, gpuIndex);
      return true;
    }
    await this.returnToService(incidentId, kind, node, gpuIndex, [step('validated', `${what} healthy according to the ${this.driver.name} driver`, now)]);
    return true;
  }

  /** The burn-in's verdict: back in service, repaired again, or left for a person. */
  private async afterBurnIn(incidentId: string, node: OpsNode, gpuIndex: number | undefined): Promise<void> {
    const inc = await this.incidents.findIncident(incidentId);
    if (!inc || inc.resolvedAt || inc.state !== 'burn-in') return;
    switch (await this.burnIn.check(inc, node, gpuIndex)) {
      case 'return-to-service':
        return this.returnToService(inc.id, inc.kind, node, gpuIndex, []);
      case 'repair-and-retry':
        return this.repairAgain(inc.id, node, gpuIndex);
      case 'start-again':
        await this.queues.failover({ action: 'remediate', incidentId: inc.id }, `remediate-${inc.id}-burnin-lost-${Date.now()}`, { delayMs: 200 });
        return;
      default:
        return; // still running, or left for a person
    }
  }

  /** A failed burn-in: the same repair once more (GPU reset or node reboot), then validation and another burn-in. */
  private async repairAgain(incidentId: string, node: OpsNode, gpuIndex: number | undefined): Promise<void> {
    const inc = await this.incidents.findIncident(incidentId);
    if (!inc || inc.resolvedAt) return;
    const reset = inc.remediation === 'reset-gpu' && gpuIndex !== undefined && this.driver.resetGpu;
    await this.incidents.incidentStep(
      inc.id,
      [
        step(
          'remediating',
          reset ? `resetting GPU ${gpuIndex} of ${node.name} again after the failed burn-in` : `rebooting ${node.name} again after the failed burn-in`,
        ),
      ],
      { state: 'remediating', attempts: inc.attempts + 1 },
    );
    if (reset) await this.driver.resetGpu!(node.name, gpuIndex);
    else if (this.driver.rebootNode) await this.driver.rebootNode(node.name);
    crashPoint('failover.remediating');
    if (!(await this.validate(inc.id, inc.kind, node, gpuIndex))) {
      await this.queues.failover({ action: 'remediate', incidentId: inc.id }, `remediate-${inc.id}-after-repair-${inc.attempts + 1}`, { delayMs: 500 });
    }
  }

  /** `retry-burn-in` / `release` of an incident that needs attention (NodeManagerService checked the state). */
  private async operatorAnswer(action: 'retry-burn-in' | 'release', incidentId: string, by: string): Promise<void> {
    const inc = await this.incidents.findIncident(incidentId);
    if (!inc || inc.resolvedAt || inc.state !== 'needs-attention') return;
    const node = inc.nodeId ? await this.nodes.findNode(inc.nodeId) : null;
    if (!node) return;
    const gpu = inc.gpuId ? node.gpus.find((g) => g.id === inc.gpuId) : undefined;
    if (action === 'retry-burn-in') return this.burnIn.retry(inc, node, gpu?.index, by);
    await this.returnToService(inc.id, inc.kind, node, gpu?.index, [
      step('released', `${by} released ${node.name}${gpu ? ` GPU ${gpu.index}` : ''} back into service without a passing burn-in`),
    ]);
  }

  /** Back in service: the GPU healthy, the node uncordoned (unless another incident holds it), the incident resolved. */
  private async returnToService(
    incidentId: string,
    kind: string,
    node: OpsNode,
    gpuIndex: number | undefined,
    first: ReturnType<typeof step>[],
  ): Promise<void> {
    const now = new Date();
    const steps = [...first];
    if (gpuIndex !== undefined) {
      const gpu = node.gpus.find((g) => g.index === gpuIndex)!;
      await this.nodes.setGpuHealth(gpu.id, 'healthy', {
        nodeId: node.id,
        type: 'gpu.healthy',
        message: `${node.name} GPU ${gpuIndex} back in service`,
        data: { gpuId: gpu.id },
      });
    }
    if (kind === 'node-down') await this.nodes.setAllGpusHealthy(node.id);
    // Uncordon unless another open incident still holds the node.
    const others = (await this.incidents.openIncidentsOn(node.id)).filter((i) => i.id !== incidentId && i.scope === 'node');
    const fresh = await this.nodes.findNode(node.id);
    if (
      fresh &&
      !others.length &&
      ['down', 'cordoned'].includes(fresh.state) &&
      (fresh.state === 'down' || /NIC|reboot|remediation/.test(fresh.stateReason ?? ''))
    ) {
      const uncordoned = await this.nodes.setNodeState(
        node.id,
        [fresh.state as 'down' | 'cordoned'],
        { state: 'ready', reason: null },
        { type: 'node.ready', message: `${node.name} validated and uncordoned` },
      );
      await this.driver.uncordon(node.name).catch(() => undefined);
      if (uncordoned) steps.push(step('uncordoned', `${node.name} back in scheduling`, now));
    }
    await this.incidents.incidentStep(incidentId, steps);
    const inc = await this.incidents.findIncident(incidentId);
    await this.markMitigated(incidentId, inc?.jobIds ?? []);
    await this.incidents.resolveIncident(incidentId, step('resolved', 'the loop is closed: hardware validated and back in service', now), now);
    await this.queues.requestSchedule(`incident ${incidentId} resolved`);
  }

  // ---- helpers -----------------------------------------------------------------------------

  private async open(cls: FaultClass, openKey: string, node: OpsNode, gpuId: string | null, at: Date, summary: string, xid?: number): Promise<string> {
    const { id, created } = await this.incidents.openIncident(
      { openKey, kind: cls.kind, severity: cls.severity, scope: cls.scope, remediation: cls.remediation, summary, nodeId: node.id, gpuId, xid, detectedAt: at },
      step('detected', summary, at),
    );
    if (created) {
      this.logger.warn(`incident ${id}: ${summary}`);
      await this.metrics.inc('failovers');
    }
    return id;
  }

  private async moveJobs(incidentId: string, jobs: ActiveJob[], cls: Pick<FaultClass, 'checkpoint'>, reason: { code: string; message: string }): Promise<void> {
    const moved = await this.mover.move(jobs, { checkpoint: cls.checkpoint, ...reason });
    if (!moved.length) return;
    await this.incidents.incidentJobs(incidentId, moved);
    const gangs = moved.filter((j) => j.nodeIds.length > 1).length;
    await this.incidents.incidentStep(incidentId, [
      step(
        'rescheduled',
        `${moved.length} job(s) returned to the queue${gangs ? ` (${gangs} multi-node gang(s), moved as a whole)` : ''}${cls.checkpoint ? ', checkpointed where they still ran' : ''}; progress kept`,
      ),
    ]);
  }

  /** Every job the fault moved runs again (or has ended): the incident is mitigated. */
  private async markMitigated(incidentId: string, jobIds: string[]): Promise<void> {
    const inc = await this.incidents.findIncident(incidentId);
    if (!inc || inc.mitigatedAt) return;
    const at = await this.nodeJobs.jobsBackAt(jobIds);
    if (at)
      await this.incidents.incidentStep(
        incidentId,
        [step('mitigated', jobIds.length ? `all ${jobIds.length} moved job(s) running again elsewhere` : 'no workload was affected', at)],
        { state: 'mitigated', stateFrom: 'open', mitigatedAt: at },
      );
  }
}
