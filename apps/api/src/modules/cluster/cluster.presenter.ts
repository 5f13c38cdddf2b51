import type { Gpu, Node, NodeBareMetal, NodeDetail, NodePowerState, NodeTransition, Persona, TimelineEvent } from '@gantry/contracts';
import { covers, type TenantScope } from '../../common/tenant-scope';
import { nodeStepToApi } from '../bare-metal/lease-states';
import type { ApiNodeRow, GpuRow, NodeRow } from './cluster.repository';

type GpuLike = Omit<GpuRow, 'node'>;

export const personaToApi = (p: string): Persona => (p === 'vm_passthrough' ? 'vm-passthrough' : (p as Persona));

/** Another tenant's job ids are never shown: only that a slot is in use. */
function visibleJobId(scope: TenantScope, a: { jobId: string | null; tenantId: string }): string | undefined {
  if (!a.jobId) return undefined;
  return scope.kind === 'platform' || a.tenantId === scope.tenantId ? a.jobId : undefined;
}

export function presentGpu(scope: TenantScope, g: GpuLike): Gpu {
  const whole = g.mode === 'whole' ? g.allocations[0] : undefined;
  return {
    id: g.id,
    nodeId: g.nodeId,
    index: g.index,
    model: g.model,
    memoryMiB: g.memoryMiB,
    nvlinkDomain: g.nvlinkDomain,
    health: g.health,
    mode: g.mode,
    ...(whole ? { jobId: visibleJobId(scope, whole) } : {}),
    ...(g.mode === 'mig'
      ? {
          mig: {
            layout: g.instances.map((i) => {
              const holder = g.allocations.find((a) => a.migStart === i.start);
              const jobId = holder ? visibleJobId(scope, holder) : undefined;
              return { profile: i.profile, start: i.start, size: i.size, ...(jobId ? { jobId } : {}) };
            }),
          },
        }
      : {}),
    ...(g.mode === 'shared' ? { sharedMilliUsed: g.allocations.reduce((s, a) => s + a.milli, 0) } : {}),
    schedulable: g.schedulable,
    ...(Array.isArray(g.migTarget)
      ? { migTarget: (g.migTarget as { profile: string; start: number }[]).map((e) => ({ profile: e.profile, start: e.start })) }
      : {}),
  };
}

/** A drain or persona switch in progress: progress from the elapsed time over the ETA, jobs left. */
export function presentTransition(n: NodeRow, now = new Date()): NodeTransition | null {
  if (n.state !== 'switching' && n.state !== 'draining') return null;
  const started = n.transitionStartedAt ?? now;
  const jobsLeft = new Set(n.gpus.flatMap((g) => g.allocations.map((a) => a.jobId ?? ''))).size;
  let progress = 0;
  if (n.state === 'switching' && n.transitionEtaAt) {
    const total = n.transitionEtaAt.getTime() - started.getTime();
    progress = total > 0 ? Math.min(0.99, Math.max(0, (now.getTime() - started.getTime()) / total)) : 0.99;
  }
  return {
    kind: n.state === 'switching' ? 'persona-switch' : 'drain',
    ...(n.personaTarget ? { persona: personaToApi(n.personaTarget) } : {}),
    startedAt: started.toISOString(),
    etaAt: n.transitionEtaAt?.toISOString() ?? null,
    progress: Math.round(progress * 100) / 100,
    jobsLeft,
  };
}

/** GPU units in use on a GPU: 1 for a whole GPU, slices / 7 for MIG, the share for shared. */
const gpuUnitsInUse = (g: GpuLike) => g.allocations.reduce((s, a) => s + Number(a.gpuUnits), 0);

/** Power state as the API spells it (`powering-down`, `powering-up`). */
export const powerToApi = (p: 'on' | 'powering_down' | 'off' | 'powering_up'): NodePowerState => p.replace('_', '-') as NodePowerState;

/**
 * A node held by a bare-metal lease: its step for everyone; the lease and its team only for a
 * caller whose scope covers the lease (another tenant sees only that the node is bare metal).
 */
export function presentBareMetal(scope: TenantScope, n: Pick<NodeRow, 'bareMetalState' | 'bareMetalLease'>): NodeBareMetal | null {
  if (!n.bareMetalState) return null;
  const lease = n.bareMetalLease;
  const state = nodeStepToApi(n.bareMetalState);
  if (!lease || !covers(scope, lease)) return { state };
  return { state, leaseId: lease.id, leaseName: lease.name, teamId: lease.teamId };
}

export function presentNode(scope: TenantScope, n: ApiNodeRow): Node {
  const models = [...new Set(n.gpus.map((g) => g.model))];
  return {
    id: n.id,
    name: n.name,
    leaf: n.leaf.name,
    spine: n.leaf.spine.name,
    persona: personaToApi(n.persona),
    state: n.state,
    powerState: powerToApi(n.powerState),
    cpuMilli: n.cpuMilli,
    memoryMiB: n.memoryMiB,
    gpuModel: models.length === 1 ? models[0]! : models.length ? models.join(', ') : null,
    gpuCount: n.gpus.length,
    gpusAllocated: Math.round(n.gpus.reduce((s, g) => s + gpuUnitsInUse(g), 0) * 1000) / 1000,
    heartbeatAt: n.heartbeat?.at.toISOString() ?? null,
    labels: (n.labels ?? {}) as Record<string, string>,
    stateReason: n.stateReason ?? null,
    personaTarget: n.personaTarget ? personaToApi(n.personaTarget) : null,
    transition: presentTransition(n),
    bareMetal: presentBareMetal(scope, n),
  };
}

export function presentNodeDetail(scope: TenantScope, n: ApiNodeRow, events: TimelineEvent[]): NodeDetail {
  return { ...presentNode(scope, n), gpus: n.gpus.map((g) => presentGpu(scope, g)), events };
}
