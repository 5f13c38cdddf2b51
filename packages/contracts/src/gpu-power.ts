/**
 * Power figures for energy accounting (the what-if planner and power management): per GPU model
 * the draw when idle, at full load and with its node powered off, plus what a node draws
 * besides its GPUs (CPUs, memory, fans, NICs) when on and in standby. Data only.
 *
 * Catalog models take idle and busy watts from GPU_MODEL_SPECS. The legacy models of the Alibaba
 * openb trace (docs/openb.md) are listed so that a replay of it can be costed: busy = the board's
 * TDP from NVIDIA's data sheets (P100 PCIe 250 W, T4 70 W, V100 PCIe 250 W / SXM2 300 W, A10
 * 150 W); idle = a typical nvidia-smi reading at P8 with no context. G2 and G3 are undisclosed
 * in the trace and assumed V100-class. Memory (MiB) is the board's framebuffer.
 */
import { GPU_MODEL_SPECS } from './gpu-catalog';

export interface GpuPowerSpec {
  /** Draw with no work, node on, W. */
  idleW: number;
  /** Draw at full load, W. */
  busyW: number;
  /** Draw while the node is powered off (standby), W. */
  offW: number;
  /** Framebuffer, MiB. */
  memoryMiB: number;
}

/** Per-node draw besides the GPUs: on (base) and powered off (BMC standby), W. */
export const NODE_POWER = Object.freeze({ baseW: 350, offW: 15 });

const LEGACY: Record<string, GpuPowerSpec> = {
  P100: { idleW: 30, busyW: 250, offW: 0, memoryMiB: 16384 },
  T4: { idleW: 10, busyW: 70, offW: 0, memoryMiB: 15360 },
  V100M16: { idleW: 40, busyW: 300, offW: 0, memoryMiB: 16384 },
  V100M32: { idleW: 40, busyW: 300, offW: 0, memoryMiB: 32768 },
  A10: { idleW: 20, busyW: 150, offW: 0, memoryMiB: 24576 },
  G2: { idleW: 40, busyW: 300, offW: 0, memoryMiB: 32768 },
  G3: { idleW: 40, busyW: 300, offW: 0, memoryMiB: 32768 },
};

/** Power and memory per GPU model: the catalog's models and the openb trace's. */
export const GPU_POWER: Readonly<Record<string, Readonly<GpuPowerSpec>>> = Object.freeze({
  ...Object.fromEntries(
    Object.values(GPU_MODEL_SPECS).map((s) => [s.model, Object.freeze({ idleW: s.idleW, busyW: s.busyW, offW: 0, memoryMiB: s.memoryMiB })]),
  ),
  ...Object.fromEntries(Object.entries(LEGACY).map(([k, v]) => [k, Object.freeze(v)])),
});

/** A model's power figures, or undefined when neither the catalog nor the legacy list knows it. */
export function gpuPowerSpec(model: string): Readonly<GpuPowerSpec> | undefined {
  return Object.prototype.hasOwnProperty.call(GPU_POWER, model) ? GPU_POWER[model] : undefined;
}
