/**
 * What an Xid does to a GPU and to the processes on it (docs/reference/gpu.md section 3).
 * The device plugin ignores application-level Xids and marks the GPU unhealthy on the others;
 * the "fatal" set kills the CUDA contexts of the GPU (the job on it dies).
 */

/** Application faults: the application is at fault, not the hardware. */
export const APPLICATION_XIDS: ReadonlySet<number> = new Set([13, 31, 43, 45, 68, 109]);

/** Xids that take the GPU's processes down: ECC double-bit / uncontained, NVLink, off the bus, GSP. */
export const PROCESS_FATAL_XIDS: ReadonlySet<number> = new Set([48, 74, 79, 94, 95, 119, 120]);

/** Injected when a fault names no Xid: the GPU has fallen off the bus. */
export const DEFAULT_FAULT_XID = 79;

export interface XidEffect {
  gpuUnhealthy: boolean;
  killsProcesses: boolean;
}

export function xidEffect(xid: number): XidEffect {
  return { gpuUnhealthy: !APPLICATION_XIDS.has(xid), killsProcesses: PROCESS_FATAL_XIDS.has(xid) };
}
