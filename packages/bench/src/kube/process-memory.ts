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

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ: 100 on Linux). */
const USER_HZ = 100;

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat; undefined once it is gone. */
export function processCpuSeconds(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // the command may hold spaces and parentheses: fields are counted after the last ')'
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
}
