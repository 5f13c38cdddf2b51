/**
 * GPU models the simulator knows: framebuffer size as NVML reports it, and the power envelope
 * used for telemetry (idle draw and TDP of the SXM parts).
 */

export interface GpuModelSpec {
  memoryMiB: number;
  idleW: number;
  tdpW: number;
}

export const GPU_MODEL_SPECS: Readonly<Record<string, GpuModelSpec>> = {
  'H100-80GB': { memoryMiB: 81559, idleW: 70, tdpW: 700 },
  'H200-141GB': { memoryMiB: 143771, idleW: 75, tdpW: 700 },
  'A100-80GB': { memoryMiB: 81920, idleW: 55, tdpW: 400 },
  'A100-40GB': { memoryMiB: 40960, idleW: 50, tdpW: 400 },
};

/** Power envelope for a model the table does not know. */
const UNKNOWN_MODEL_POWER = { idleW: 50, tdpW: 300 };

export function gpuPowerEnvelope(model: string): { idleW: number; tdpW: number } {
  return GPU_MODEL_SPECS[model] ?? UNKNOWN_MODEL_POWER;
}

/** `H100-80GB` -> `h100`: the family prefix of node names. */
export function gpuFamily(model: string): string {
  return model.split('-')[0].toLowerCase();
}
