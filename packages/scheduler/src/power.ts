/**
 * Node power: the states a node goes through, what it draws in each, and the power-management
 * rule (pure). Power down nodes empty for `idleSeconds` while the GPUs left free on the nodes
 * still on cover the queued demand plus a headroom; power up nodes ahead of queued demand that
 * fits nowhere on the nodes that are on. The what-if planner's replays (packages/planner) and the
 * live node manager (apps/api node-manager) both decide with these functions.
 */
import { NODE_POWER, gpuPowerSpec } from '@gantry/contracts';

export type PowerState = 'on' | 'powering-down' | 'off' | 'powering-up';

export interface PowerOptions {
  /** A node must have been empty this long before it may power down. */
  idleSeconds: number;
  /** GPUs kept free on nodes that are on, as a share of all the cluster's GPUs (0..1). */
  headroom: number;
  /** Boot time of a node (powering-up -> on). */
  bootSeconds: number;
  /** Shutdown time (powering-down -> off). */
  shutdownSeconds: number;
}

export const DEFAULT_POWER: Readonly<PowerOptions> = Object.freeze({ idleSeconds: 1800, headroom: 0.1, bootSeconds: 300, shutdownSeconds: 60 });

export interface NodePower {
  /** Draw of the node on with idle GPUs, W. */
  idleW: number;
  /** Extra draw per unit of SM use (one GPU fully busy), W. */
  perSmW: number;
  /** Draw powered off, W. */
  offW: number;
  /** Framebuffer of one GPU, MiB. */
  gpuMemoryMiB: number;
}

/** Power figures of a node with `gpus` GPUs of `model` (unknown models draw only the node's base). */
export function nodePower(n: { model: string; gpus: number }): NodePower {
  const g = gpuPowerSpec(n.model) ?? { idleW: 0, busyW: 0, offW: 0, memoryMiB: 0 };
  return {
    idleW: NODE_POWER.baseW + n.gpus * g.idleW,
    perSmW: g.busyW - g.idleW,
    offW: NODE_POWER.offW + n.gpus * g.offW,
    gpuMemoryMiB: g.memoryMiB,
  };
}

/** Draw of a node in a state with `sm` GPUs' worth of SM work on it. Transitions draw idle power. */
export function drawW(p: NodePower, state: PowerState, sm: number): number {
  return state === 'off' ? p.offW : p.idleW + p.perSmW * sm;
}

/** What power management saves while a node is off instead of on and idle, W. */
export function savedW(p: NodePower): number {
  return drawW(p, 'on', 0) - drawW(p, 'off', 0);
}

export interface PowerDownView {
  /** Nodes empty for at least idleSeconds and on, best candidates first. */
  candidates: number[];
  gpus: (i: number) => number;
  model: (i: number) => string;
  /** GPUs free on nodes that are on or powering up. */
  freeGpus: number;
  /** GPUs wanted by the jobs waiting in the queue. */
  queuedGpus: number;
  totalGpus: number;
  /** Nodes on (or powering up) per model. */
  onPerModel: Map<string, number>;
}

/** Which candidates to power down now: as many as the headroom allows, keeping one node of each model on. */
export function choosePowerDowns(v: PowerDownView, headroom: number): number[] {
  const keep = Math.ceil(headroom * v.totalGpus) + v.queuedGpus;
  let free = v.freeGpus;
  const onPerModel = new Map(v.onPerModel);
  const out: number[] = [];
  for (const i of v.candidates) {
    const g = v.gpus(i);
    const m = v.model(i);
    if ((onPerModel.get(m) ?? 0) <= 1) continue;
    if (free - g < keep) continue;
    free -= g;
    onPerModel.set(m, onPerModel.get(m)! - 1);
    out.push(i);
  }
  return out;
}

/** A node for the power-up look-ahead. */
export interface PowerUpNode {
  id: string;
  model: string | null;
  state: PowerState;
  /** GPUs free now (on), or all its GPUs (powering up: they will all be free). */
  gpusFree: number;
  gpuCount: number;
}

/** Replicas of a queued job: GPUs per replica, optionally of one model. */
export interface QueuedReplicas {
  jobId: string;
  gpus: number;
  gpuModel?: string;
  replicas: number;
}

/**
 * Power up ahead of queued demand (the look-ahead of the persona planner): each queued replica
 * takes free GPUs on a node that is on or already booting; a replica that fits on none of them
 * boots an off node that can hold it, whose GPUs then serve the next replicas. Returns the
 * nodes to power up with why, and the replicas no node could serve.
 */
export function choosePowerUps(nodes: readonly PowerUpNode[], demand: readonly QueuedReplicas[]): { up: { nodeId: string; reason: string }[]; unmet: number } {
  const fits = (n: PowerUpNode, model?: string) => !model || n.model === model;
  const slots = nodes.filter((n) => n.state === 'on' || n.state === 'powering-up').map((n) => ({ node: n, free: n.gpusFree }));
  const off = nodes.filter((n) => n.state === 'off' && n.gpuCount > 0);
  const up: { nodeId: string; reason: string }[] = [];
  let unmet = 0;
  for (const d of demand) {
    if (d.gpus <= 0) continue;
    for (let r = 0; r < d.replicas; r++) {
      let slot = slots.find((s) => fits(s.node, d.gpuModel) && s.free >= d.gpus);
      if (!slot) {
        const next = off.find((n) => !up.some((u) => u.nodeId === n.id) && fits(n, d.gpuModel) && n.gpuCount >= d.gpus);
        if (!next) {
          unmet++;
          continue;
        }
        up.push({
          nodeId: next.id,
          reason: `queued job ${d.jobId} needs ${d.gpus} GPU(s)${d.gpuModel ? ` of ${d.gpuModel}` : ''} that no powered node has free`,
        });
        slot = { node: next, free: next.gpuCount };
        slots.push(slot);
      }
      slot.free -= d.gpus;
    }
  }
  return { up, unmet };
}
