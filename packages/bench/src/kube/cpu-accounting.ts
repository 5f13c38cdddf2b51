/**
 * CPU seconds of the processes a placement goes through, by part, from /proc: each part is a set
 * of pids read again at every sample (Postgres serves each connection from its own backend, and
 * a pool may open one between two samples). A pid seen only in the later sample started in
 * between and counts in full; one gone by then is missed (a connection closed mid-run).
 */
import { processCpuSeconds } from './process-memory';

export type CpuParts<K extends string> = Record<K, () => number[] | Promise<number[]>>;
export type CpuSample<K extends string> = Record<K, Map<number, number>>;
export type CpuSeconds<K extends string> = Record<K, number>;

export async function sampleCpu<K extends string>(parts: CpuParts<K>): Promise<CpuSample<K>> {
  const sample = {} as CpuSample<K>;
  for (const part of Object.keys(parts) as K[]) {
    const byPid = new Map<number, number>();
    for (const pid of await parts[part]()) {
      const seconds = processCpuSeconds(pid);
      if (seconds !== undefined) byPid.set(pid, seconds);
    }
    sample[part] = byPid;
  }
  return sample;
}

/** CPU seconds each part used between two samples. */
export function cpuBetween<K extends string>(before: CpuSample<K>, after: CpuSample<K>): CpuSeconds<K> {
  const used = {} as CpuSeconds<K>;
  for (const part of Object.keys(after) as K[]) {
    let seconds = 0;
    for (const [pid, now] of after[part]) seconds += Math.max(0, now - (before[part]?.get(pid) ?? 0));
    used[part] = seconds;
  }
  return used;
}
