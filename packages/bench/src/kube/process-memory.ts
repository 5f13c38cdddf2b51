/** Resident memory of a process from /proc (Linux): now (VmRSS) and its peak (VmHWM), in MiB. */
import { readFileSync } from 'node:fs';

export function processMemoryMiB(pid: number): { rssMiB: number; peakMiB: number } | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMiB: Math.round(kb('VmRSS') / 1024), peakMiB: Math.round(kb('VmHWM') / 1024) };
}
