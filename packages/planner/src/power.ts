/**
 * Node power: the states a node goes through, what it draws in each, and the power-management
 * rule (node-manager logic, pure): power down nodes empty for `idleSeconds` while the GPUs left
 * free on the nodes still on cover the queued demand plus a headroom; power up nodes ahead of
 * queued demand that fits nowhere on the nodes that are on.
 */
import { NODE_POWER, gpuPowerSpec } from '@gantry/contracts';
import type { PlannerNode } from './cluster';

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

export function nodePower(n: PlannerNode): NodePower {
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
