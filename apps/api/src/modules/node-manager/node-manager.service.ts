import { Inject, Injectable } from '@nestjs/common';
import { DEFAULT_SIMULATED_DELAYS } from '@gantry/driver';
import { validateMigLayout } from '@gantry/scheduler';
import type {
  FaultAccepted,
  FaultRequest,
  Incident,
  IncidentActionAccepted,
  MigChangeAccepted,
  MigLayoutRequest,
  NodeActionResult,
  Page,
  PageQuery,
  Persona,
  Topology,
} from '@gantry/contracts';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { DomainError, notFound } from '../../common/errors';
import { toPage } from '../../common/pagination';
import { scopeOf, type Principal } from '../../common/principal';
import { QueuesService } from '../../queues/queues.service';
import { ClusterRepository } from '../cluster/cluster.repository';
import { personaToApi, powerToApi } from '../cluster/cluster.presenter';
import { PowerRepository } from './power.repository';
import { layoutKey } from './mig-manager.service';
import { NodesRepository, type OpsNode } from './nodes.repository';
import { IncidentsRepository } from './incidents.repository';
import { MigChangesRepository } from './mig-changes.repository';
import { presentIncident } from './incident.presenter';
import { personaToDb } from './persona.service';

const result = (n: Pick<OpsNode, 'id' | 'name' | 'state' | 'persona' | 'personaTarget' | 'stateReason' | 'powerState'>): NodeActionResult => ({
  nodeId: n.id,
  name: n.name,
  state: n.state,
  persona: personaToApi(n.persona),
  personaTarget: n.personaTarget ? personaToApi(n.personaTarget) : null,
  stateReason: n.stateReason,
  powerState: powerToApi(n.powerState),
});

/**
 * Operator actions of the API (the cluster driver lives in the worker): state changes are
 * committed here with a state check, the driver side goes through the `persona`, `mig` and
 * `failover` queues.
 */
@Injectable()
export class NodeManagerService {
  constructor(
    private readonly nodes: NodesRepository,
    private readonly incidentsRepo: IncidentsRepository,
    private readonly migChanges: MigChangesRepository,
    private readonly cluster: ClusterRepository,
    private readonly queues: QueuesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly power: PowerRepository,
  ) {}

  private async node(id: string): Promise<OpsNode> {
    const n = await this.nodes.findNode(id);
    if (!n) throw notFound('node', id);
    return n;
  }

  private async fresh(id: string): Promise<NodeActionResult> {
    return result(await this.node(id));
  }

  async cordon(p: Principal, id: string, reason?: string): Promise<NodeActionResult> {
    const n = await this.node(id);
    if (n.state === 'cordoned') return result(n);
    if (n.state !== 'ready') throw new DomainError('invalid_state', `node ${n.name} is ${n.state} and cannot be cordoned`);
    const why = `cordoned by ${p.name}${reason ? `: ${reason}` : ''}`;
    await this.nodes.setNodeState(n.id, ['ready'], { state: 'cordoned', reason: why }, { type: 'node.cordoned', message: `${n.name} ${why}` });
    await this.queues.persona({ action: 'cordon', nodeId: n.id });
    return this.fresh(n.id);
  }

  async uncordon(p: Principal, id: string): Promise<NodeActionResult> {
    const n = await this.node(id);
    if (n.state === 'ready') return result(n);
    if (n.state !== 'cordoned') {
      throw new DomainError(
        'invalid_state',
        `node ${n.name} is ${n.state}: ${n.state === 'down' ? 'it is uncordoned by the failover loop once validated' : 'wait until it finishes'}`,
      );
    }
    const holding = (await this.incidentsRepo.openIncidentsOn(n.id)).filter((i) => i.scope === 'node');
    if (holding.length) throw new DomainError('invalid_state', `node ${n.name} is held by open incident ${holding[0]!.id} (${holding[0]!.summary})`);
    await this.nodes.setNodeState(
      n.id,
      ['cordoned'],
      { state: 'ready', reason: null },
      { type: 'node.uncordoned', message: `${n.name} uncordoned by ${p.name}` },
    );
    await this.queues.persona({ action: 'uncordon', nodeId: n.id });
    await this.queues.requestSchedule(`node ${n.name} uncordoned`);
    return this.fresh(n.id);
  }

  async drain(p: Principal, id: string, reason?: string): Promise<NodeActionResult> {
    const n = await this.node(id);
    if (n.state !== 'draining') {
      if (n.state !== 'ready' && n.state !== 'cordoned') throw new DomainError('invalid_state', `node ${n.name} is ${n.state} and cannot be drained`);
      const why = `drained by ${p.name}${reason ? `: ${reason}` : ''}`;
      await this.nodes.setNodeState(
        n.id,
        ['ready', 'cordoned'],
        { state: 'draining', reason: why, transitionStartedAt: new Date(), transitionEtaAt: null },
        { type: 'node.draining', message: `${n.name} ${why}: jobs are checkpointed and moved` },
      );
    }
    await this.queues.persona({ action: 'drain', nodeId: n.id, reason: reason ?? `by ${p.name}` });
    return this.fresh(n.id);
  }

  async setPersona(p: Principal, id: string, persona: Persona): Promise<NodeActionResult> {
    const n = await this.node(id);
    const target = personaToDb(persona);
    if (n.state === 'switching') {
      if (n.personaTarget === target) return result(n);
      throw new DomainError('conflict', `node ${n.name} is already switching to ${personaToApi(n.personaTarget ?? n.persona)}`);
    }
    if (n.persona === target) return result(n);
    if (n.state !== 'ready' && n.state !== 'cordoned') throw new DomainError('invalid_state', `node ${n.name} is ${n.state}: its persona cannot change now`);
    if (n.bareMetalLeaseId)
      throw new DomainError('invalid_state', `node ${n.name} is held as bare metal: its persona cannot change until its lease is released`);
    const now = new Date();
    const seconds = this.config.driver.simulated ? DEFAULT_SIMULATED_DELAYS.personaSwitchSeconds / this.config.driver.simSpeed : 240;
    const eta = new Date(now.getTime() + seconds * 1000);
    await this.nodes.setNodeState(
      n.id,
      ['ready', 'cordoned'],
      { state: 'switching', reason: `switching to ${persona} (by ${p.name})`, personaTarget: target, transitionStartedAt: now, transitionEtaAt: eta },
      {
        type: 'node.persona.switching',
        message: `${n.name}: switching persona ${personaToApi(n.persona)} -> ${persona} (by ${p.name}); draining, ETA ${eta.toISOString()}`,
        data: { persona },
      },
    );
    await this.queues.persona({ action: 'switch', nodeId: n.id, persona, reason: `by ${p.name}` });
    return this.fresh(n.id);
  }

  /**
   * Power a node off or on by hand (202 while it changes). Off is refused with 409 while the node
   * holds work (checked under the same row lock as placement), or while it is not ready/cordoned.
   */
  async setPower(p: Principal, id: string, state: 'on' | 'off', reason?: string): Promise<NodeActionResult> {
    const n = await this.node(id);
    const why = `by ${p.name}${reason ? `: ${reason}` : ''}`;
    const now = new Date();
    if (state === 'off') {
      if (n.powerState === 'off' || n.powerState === 'powering_down') return result(n);
      const r = await this.power.beginPowerDown(n.id, why, now);
      if (r !== true) {
        if (r.refused === 'holds-work')
          throw new DomainError('conflict', `node ${n.name} holds work (${r.allocations} allocation(s)): drain it before powering it off`);
        throw new DomainError('conflict', `node ${n.name} is ${r.state} (power ${powerToApi(r.powerState)}): it cannot power off now`);
      }
    } else {
      if (n.powerState === 'on' || n.powerState === 'powering_up') return result(n);
      if (n.powerState === 'powering_down') throw new DomainError('conflict', `node ${n.name} is powering down: power it on once it is off`);
      if (!(await this.power.beginPowerUp(n.id, why, now))) throw new DomainError('conflict', `node ${n.name} changed power state meanwhile: try again`);
    }
    await this.queues.power({ action: state, nodeId: n.id, reason: why });
    return this.fresh(n.id);
  }

  async setMigLayout(p: Principal, gpuId: string, body: MigLayoutRequest): Promise<MigChangeAccepted> {
    const gpu = await this.nodes.findGpu(gpuId);
    if (!gpu) throw notFound('GPU', gpuId);
    const layout = body.layout.map((e) => ({ profile: e.profile, start: e.start }));
    if (layout.length) {
      const v = validateMigLayout(gpu.model, layout);
      if (!v.ok)
        throw new DomainError('validation_failed', `invalid MIG layout (rule ${v.rule}): ${v.message}`, [
          { field: 'layout', problem: `${v.rule}: ${v.message}` },
        ]);
      if (!gpu.migCapable)
        throw new DomainError('validation_failed', `invalid MIG layout (rule mig_capable): ${gpu.model} GPU ${gpu.index} does not support MIG`, [
          { field: 'layout', problem: 'mig_capable' },
        ]);
      if (gpu.node.persona === 'vm_passthrough')
        throw new DomainError('invalid_state', `node ${gpu.node.name} runs the vm-passthrough persona: its GPUs go whole to VMs`);
    }
    if (gpu.health !== 'healthy') throw new DomainError('invalid_state', `GPU ${gpu.index} of ${gpu.node.name} is ${gpu.health} (quarantined)`);
    if (gpu.node.state === 'down') throw new DomainError('invalid_state', `node ${gpu.node.name} is down`);
    const inFlight = gpu.migTarget as { profile: string; start: number }[] | null;
    if (inFlight && layoutKey(inFlight) !== layoutKey(layout)) {
      throw new DomainError('conflict', `a MIG change is already being applied to GPU ${gpu.index} of ${gpu.node.name}`);
    }
    const current = gpu.instances.map((i) => ({ profile: i.profile, start: i.start }));
    if (!inFlight && layoutKey(current) === layoutKey(layout) && (gpu.mode === 'mig') === layout.length > 0) {
      return { gpuId: gpu.id, nodeId: gpu.nodeId, state: 'unchanged', layout };
    }
    await this.migChanges.beginMigChange(gpu.id, layout, `by ${p.name}`, new Date());
    await this.queues.mig({ gpuId: gpu.id, layout, reason: `by ${p.name}` });
    return { gpuId: gpu.id, nodeId: gpu.nodeId, state: 'applying', layout };
  }

  async topology(): Promise<Topology> {
    const rows = await this.cluster.allNodes();
    const spines = new Map<string, Map<string, Topology['spines'][number]['leaves'][number]['nodes']>>();
    let gpus = 0;
    for (const n of rows) {
      const leaves = spines.get(n.leaf.spine.name) ?? new Map();
      spines.set(n.leaf.spine.name, leaves);
      const list = leaves.get(n.leaf.name) ?? [];
      leaves.set(n.leaf.name, list);
      const models = [...new Set(n.gpus.map((g) => g.model))];
      gpus += n.gpus.length;
      list.push({
        id: n.id,
        name: n.name,
        persona: personaToApi(n.persona),
        state: n.state,
        gpuModel: models.length ? models.join(', ') : null,
        gpuCount: n.gpus.length,
        gpusAllocated: Math.round(n.gpus.reduce((s, g) => s + g.allocations.reduce((x, a) => x + Number(a.gpuUnits), 0), 0) * 1000) / 1000,
        gpusUnhealthy: n.gpus.filter((g) => g.health !== 'healthy').length,
        powerState: powerToApi(n.powerState),
      });
    }
    const byName = (a: string, b: string) => a.localeCompare(b, undefined, { numeric: true });
    const out = [...spines.entries()]
      .sort(([a], [b]) => byName(a, b))
      .map(([name, leaves]) => ({
        name,
        leaves: [...leaves.entries()]
          .sort(([a], [b]) => byName(a, b))
          .map(([leaf, nodes]) => ({ name: leaf, nodes: nodes.sort((a, b) => byName(a.name, b.name)) })),
      }));
    return { spines: out, totals: { spines: out.length, leaves: out.reduce((s, x) => s + x.leaves.length, 0), nodes: rows.length, gpus } };
  }

  async incidents(p: Principal, q: PageQuery & { state?: string; nodeId?: string }): Promise<Page<Incident>> {
    const scope = scopeOf(p);
    const rows = await this.incidentsRepo.listIncidents(q, q);
    const page = toPage(rows, q, (r) => r);
    const targets = await this.incidentsRepo.incidentTargets(
      page.items.map((r) => r.nodeId).filter((x): x is string => !!x),
      page.items.map((r) => r.gpuId).filter((x): x is string => !!x),
    );
    return { items: page.items.map((r) => presentIncident(scope, r, targets)), nextCursor: page.nextCursor };
  }

  /**
   * An operator's answer to an incident that failed burn-in too often (`needs-attention`): run
   * the burn-in again (after replacing the part) or release the hardware into service as it is.
   * The worker does it (the driver lives there); 409 when the incident does not wait for a person.
   */
  async answerIncident(p: Principal, id: string, action: 'burn-in' | 'release'): Promise<IncidentActionAccepted> {
    const inc = await this.incidentsRepo.findIncident(id);
    if (!inc) throw notFound('incident', id);
    if (inc.state !== 'needs-attention') {
      throw new DomainError(
        'invalid_state',
        `incident ${id} is ${inc.state}: only an incident that needs attention (failed burn-in) takes a retry or a release`,
      );
    }
    await this.queues.failover(
      { action: action === 'burn-in' ? 'retry-burn-in' : 'release', incidentId: inc.id, source: p.name },
      `answer-${inc.id}-${action}-${Date.now()}`,
    );
    return { accepted: true, incidentId: inc.id, action };
  }

  async injectFault(p: Principal, body: FaultRequest): Promise<FaultAccepted> {
    if (!this.config.driver.faultInjection)
      throw new DomainError(
        'invalid_state',
        'faults can only be injected into a simulated cluster (GANTRY_DRIVER=simulated or remote) or an emulated one (GANTRY_DRIVER=kubernetes with GANTRY_KUBE_EMULATOR_URL)',
      );
    const n = await this.node(body.nodeId);
    if (body.gpuIndex !== undefined && !n.gpus.some((g) => g.index === body.gpuIndex)) {
      throw new DomainError('validation_failed', `gpuIndex: node ${n.name} has no GPU ${body.gpuIndex}`, [
        { field: 'gpuIndex', problem: `0..${n.gpus.length - 1}` },
      ]);
    }
    await this.queues.failover(
      { action: 'inject', kind: body.kind, nodeName: n.name, gpuIndex: body.gpuIndex, xid: body.xid, source: p.name },
      `inject-${n.id}-${body.kind}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`,
      { attempts: 1 },
    );
    return { accepted: true, nodeId: n.id, nodeName: n.name, kind: body.kind };
  }
}
