import type { TeamUsage } from '@gantry/scheduler';

/**
 * The engine's fair-share input over time: per team, GPUs = (1 - w) x GPUs held now + w x its
 * decayed average GPUs (usage-decay.ts), w = GANTRY_FAIR_SHARE_HISTORY_WEIGHT in [0, 1]. w = 0 is
 * fair share by current holdings only; w = 1 is Slurm's: decayed usage alone (which includes
 * what runs now, as it accrues), so a team that ran heavily yields until the others catch up.
 * CPU and memory stay current-only. Teams with only a history get an entry too.
 */
export function withHistory(current: Record<string, TeamUsage>, decayedAverageGpus: Record<string, number>, w: number): Record<string, TeamUsage> {
  const out: Record<string, TeamUsage> = {};
  for (const [team, u] of Object.entries(current)) out[team] = { ...u, gpus: (1 - w) * u.gpus };
  for (const [team, g] of Object.entries(decayedAverageGpus)) {
    if (!(g > 0) || w === 0) continue;
    const u = (out[team] ??= { gpus: 0, cpuMilli: 0, memoryMiB: 0 });
    u.gpus += w * g;
  }
  return out;
}
