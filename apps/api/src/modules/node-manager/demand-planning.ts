/**
 * Planning from queue demand (pure; time is passed in).
 *
 * Personas: look ahead in the queue. Pending VM replicas that no vm-passthrough node (ready or
 * already switching to it) can hold get idle container nodes switched for them, before they
 * need them; idle vm-passthrough nodes go back to containers once no VM demand is left. A node
 * that changed persona less than `holdMs` ago is left alone (no flapping).
 *
 * MIG: pending MIG slices and whole GPUs, by GPU model, for the engine's MIG planner.
 */
import type { JobResources, Persona } from '@gantry/contracts';
import type { MigDemand, WholeDemand } from '@gantry/scheduler';

export interface PersonaNode {
  id: string;
  persona: Persona;
  state: 'ready' | 'cordoned' | 'draining' | 'switching' | 'down';
  personaTarget: Persona | null;
  gpuModel: string | null;
  gpuCount: number;
  /** Healthy GPUs without any allocation. */
  gpusFree: number;
  /** No allocation at all on the node. */
  idle: boolean;
  personaChangedAtMs: number | null;
}

export interface VmReplicaDemand {
  jobId: string;
  gpus: number;
  gpuModel?: string;
  replicas: number;
}

export interface PersonaPlan {
  switches: { nodeId: string; persona: Persona; reason: string }[];
  /** VM replicas no node can serve even after the switches. */
  unmetReplicas: number;
}

export function planPersonas(input: { nodes: PersonaNode[]; vmDemand: VmReplicaDemand[]; nowMs: number; holdMs: number }): PersonaPlan {
  const held = (n: PersonaNode) => n.personaChangedAtMs !== null && input.nowMs - n.personaChangedAtMs < input.holdMs;
  const fits = (n: PersonaNode, model?: string) => !model || n.gpuModel === model;
  // Capacity of VM nodes (ready, or switching to vm-passthrough) in free GPUs per node.
  const vmNodes = input.nodes
    .filter((n) => (n.state === 'ready' && n.persona === 'vm-passthrough') || (n.state === 'switching' && n.personaTarget === 'vm-passthrough'))
    .map((n) => ({ node: n, free: n.state === 'switching' ? n.gpuCount : n.gpusFree }));
  const candidates = input.nodes
    .filter((n) => n.state === 'ready' && n.persona === 'container' && n.idle && n.gpuCount > 0 && !held(n))
    .sort((a, b) => a.id.localeCompare(b.id));
  const switches: PersonaPlan['switches'] = [];
  const used = new Set<string>();
  let unmet = 0;
  for (const d of input.vmDemand) {
    for (let r = 0; r < d.replicas; r++) {
      let slot = vmNodes.find((v) => fits(v.node, d.gpuModel) && v.free >= d.gpus);
      if (!slot) {
        const next = candidates.find((c) => !used.has(c.id) && fits(c, d.gpuModel) && c.gpuCount >= d.gpus);
        if (!next) {
          unmet++;
          continue;
        }
        used.add(next.id);
        switches.push({ nodeId: next.id, persona: 'vm-passthrough', reason: `pending VM job ${d.jobId} needs ${d.gpus} GPU(s) on a vm-passthrough node` });
        slot = { node: next, free: next.gpuCount };
        vmNodes.push(slot);
      }
      slot.free -= d.gpus;
    }
  }
  // Give idle VM nodes back when no VM demand is left for them.
  if (input.vmDemand.length === 0) {
    for (const n of input.nodes) {
      if (n.state === 'ready' && n.persona === 'vm-passthrough' && n.idle && !held(n)) {
        switches.push({ nodeId: n.id, persona: 'container', reason: 'no pending VM demand: idle vm-passthrough node given back to containers' });
      }
    }
  }
  return { switches, unmetReplicas: unmet };
}

export interface PendingDemandRow {
  kind: string;
  replicas: number;
  resources: unknown;
}

/** MIG slices and whole GPUs wanted by pending container jobs, per model. */
export function migDemandOf(rows: PendingDemandRow[]): { migDemand: MigDemand[]; wholeDemand: WholeDemand[] } {
  const mig = new Map<string, MigDemand>();
  const whole = new Map<string, WholeDemand>();
  for (const row of rows) {
    if (row.kind === 'vm') continue;
    const r = row.resources as JobResources;
    const models = r.gpuModel ? [r.gpuModel] : undefined;
    if (r.migProfile) {
      const key = `${r.migProfile}|${r.gpuModel ?? ''}`;
      const d = mig.get(key) ?? { profile: r.migProfile, count: 0, gpuModels: models };
      d.count += row.replicas;
      mig.set(key, d);
    } else if (r.gpus) {
      const key = r.gpuModel ?? '';
      const d = whole.get(key) ?? { count: 0, gpuModels: models };
      d.count += row.replicas * r.gpus;
      whole.set(key, d);
    }
  }
  return { migDemand: [...mig.values()], wholeDemand: [...whole.values()] };
}

/** VM replicas wanted by pending VM jobs. */
export function vmDemandOf(rows: (PendingDemandRow & { id: string })[]): VmReplicaDemand[] {
  return rows
    .filter((r) => r.kind === 'vm')
    .map((r) => {
      const res = r.resources as JobResources;
      return { jobId: r.id, gpus: res.gpus ?? 1, gpuModel: res.gpuModel, replicas: r.replicas };
    });
}

/** A GPU whose MIG change is being applied: its target layout and the slice starts that hold work. */
export interface MigInFlight {
  model: string;
  target: { profile: string; start: number }[];
  busyStarts: ReadonlySet<number>;
}

/**
 * Demand left once the changes in flight are counted: each free slice a change is creating
 * serves one pending slice of its profile, each GPU going back to full size one whole GPU.
 * Without this, the planner would re-partition another GPU for the same job on every round
 * while the first change is applied.
 */
export function creditInFlight(
  d: { migDemand: MigDemand[]; wholeDemand: WholeDemand[] },
  inFlight: readonly MigInFlight[],
): { migDemand: MigDemand[]; wholeDemand: WholeDemand[] } {
  const migDemand = d.migDemand.map((x) => ({ ...x }));
  const wholeDemand = d.wholeDemand.map((x) => ({ ...x }));
  const fits = (models: string[] | undefined, m: string) => !models?.length || models.includes(m);
  for (const g of inFlight) {
    if (!g.target.length) {
      const w = wholeDemand.find((x) => x.count > 0 && fits(x.gpuModels, g.model));
      if (w) w.count--;
      continue;
    }
    for (const s of g.target) {
      if (g.busyStarts.has(s.start)) continue;
      const m = migDemand.find((x) => x.count > 0 && x.profile === s.profile && fits(x.gpuModels, g.model));
      if (m) m.count--;
    }
  }
  return { migDemand: migDemand.filter((x) => x.count > 0), wholeDemand: wholeDemand.filter((x) => x.count > 0) };
}
