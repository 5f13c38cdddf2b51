import { runCycle, type ClusterSnapshot, type NodeState, type PendingJob, type TeamUsage } from '@gantry/scheduler';
import { withHistory } from './fair-usage';
import { decayedAverageGpus, rollUsage, type DecayParams, type Holding, type UsageRecord } from './usage-decay';

/**
 * Fair share over time, measured over simulated time with the cycle's own pieces: the decay
 * (rollUsage, as the worker persists it), the fair-share input (withHistory) and the engine
 * (runCycle). Two teams of equal weight on 8 GPUs; team A ran all 8 for the 4 hours before t=0,
 * team B ran nothing; from t=0 both keep 40 one-GPU jobs of 10 minutes queued.
 */
const H = 3600;
const STEP = 60;
const JOB_SECONDS = 600;
const p: DecayParams = { halfLifeSeconds: H, simSpeed: 1 };

function cluster(): ClusterSnapshot {
  const node: NodeState = {
    id: 'n0',
    name: 'n0',
    leaf: 'l0',
    spine: 's0',
    schedulable: true,
    persona: 'container',
    cpuMilli: 1_000_000,
    memoryMiB: 10_000_000,
    cpuMilliFree: 1_000_000,
    memoryMiBFree: 10_000_000,
    gpus: Array.from({ length: 8 }, (_, i) => ({
      id: `g${i}`,
      index: i,
      model: 'H100-80GB',
      nvlinkDomain: 0,
      healthy: true,
      schedulable: true,
      mode: 'whole' as const,
      allocated: false,
      sharedMilliUsed: 0,
      mig: [],
    })),
  };
  return { nodes: [node] };
}

interface Run {
  /** Simulated second at which team A got its first GPU. */
  firstForA: number;
  /** Team of each placement, in order, with its time. */
  placements: { team: string; at: number }[];
  /** Decayed usage (GPU-seconds) of each team per step. */
  usage: { at: number; a: number; b: number }[];
}

function simulate(historyWeight: number, seconds: number): Run {
  const snapshot = cluster();
  const gpus = snapshot.nodes[0]!.gpus;
  const holdings: Holding[] = [{ teamId: 'A', gpus: 8, startMs: -4 * H * 1000, endMs: 0 }];
  let records = new Map<string, UsageRecord>();
  let rolledTo = -10 * H * 1000;
  const running: { team: string; gpu: number; endsAt: number; holding: Holding }[] = [];
  let seq = 0;
  const queued = (team: string, t: number): PendingJob[] =>
    Array.from({ length: 40 }, (_, i) => ({
      id: `${team}-${t}-${i}-${seq++}`,
      teamId: team,
      priority: 50,
      createdAtMs: t * 1000 + i,
      replicas: 1,
      request: { gpus: 1, cpuMilli: 0, memoryMiB: 0 },
      topology: { level: 'any' as const, required: false },
    }));
  const run: Run = { firstForA: -1, placements: [], usage: [] };
  for (let t = 0; t <= seconds; t += STEP) {
    const nowMs = t * 1000;
    // jobs that ran their 10 minutes end, their GPUs come free
    for (const r of running.filter((x) => x.endsAt <= t)) {
      r.holding.endMs = r.endsAt * 1000;
      gpus[r.gpu]!.allocated = false;
      running.splice(running.indexOf(r), 1);
    }
    // the worker rolls the decayed usage forward (only the stretches since the last roll)
    records = rollUsage(
      records,
      holdings.filter((h) => h.endMs === null || h.endMs > rolledTo),
      ['A', 'B'],
      nowMs,
      rolledTo,
      p,
    );
    rolledTo = nowMs;
    run.usage.push({ at: t, a: records.get('A')!.gpuSeconds, b: records.get('B')!.gpuSeconds });
    const held: Record<string, TeamUsage> = {};
    for (const r of running) (held[r.team] ??= { gpus: 0, cpuMilli: 0, memoryMiB: 0 }).gpus += 1;
    const history = Object.fromEntries([...records].map(([team, rec]) => [team, decayedAverageGpus(rec.gpuSeconds, p)]));
    const decision = runCycle(snapshot, [...queued('A', t), ...queued('B', t)], { teamUsage: withHistory(held, history, historyWeight) });
    for (const d of decision.placed) {
      const team = d.jobId.slice(0, 1);
      const gpu = d.replicas[0]!.gpus[0]!.index;
      gpus[gpu]!.allocated = true;
      const holding: Holding = { teamId: team, gpus: 1, startMs: nowMs, endMs: null };
      holdings.push(holding);
      running.push({ team, gpu, endsAt: t + JOB_SECONDS, holding });
      run.placements.push({ team, at: t });
      if (team === 'A' && run.firstForA < 0) run.firstForA = t;
    }
  }
  return run;
}

describe('fair share over time (simulated hours)', () => {
  const decayed = simulate(1, 12 * H);
  const blended = simulate(0.5, 12 * H);

  it('w = 1 (decayed usage only): B’s jobs go first in every cycle, with more GPUs than A until the decayed usage evens out', () => {
    const cycles = [...new Set(decayed.placements.map((x) => x.at))].map((at) => {
      const teams = decayed.placements.filter((x) => x.at === at).map((x) => x.team);
      return { at, first: teams[0], b: teams.filter((t) => t === 'B').length, a: teams.filter((t) => t === 'A').length };
    });
    expect(cycles[0]).toEqual({ at: 0, first: 'B', b: 8, a: 0 });
    expect(cycles.every((c) => c.first === 'B' && c.b >= c.a)).toBe(true);
    // B's lead shrinks as the usages converge, never grows back
    for (let i = 1; i < cycles.length; i++) expect(cycles[i]!.b).toBeLessThanOrEqual(cycles[i - 1]!.b);
    const even = cycles.find((c) => c.b === c.a)!;
    expect(even.at).toBeGreaterThan(H);
    const u = decayed.usage.find((x) => x.at === even.at)!;
    expect(Math.abs(u.a - u.b) / u.a).toBeLessThan(0.2);
    for (const c of cycles.filter((x) => x.at < even.at)) {
      const v = decayed.usage.find((x) => x.at === c.at)!;
      expect(v.a).toBeGreaterThan(v.b);
    }
  });

  it.each([
    ['w = 1', decayed],
    ['w = 0.5 (the default)', blended],
  ])('%s: the decayed usage evens out: after 12 half-lives the teams are within 10 %% and share the GPUs', (_, run) => {
    const last = run.usage[run.usage.length - 1]!;
    expect(Math.abs(last.a - last.b) / Math.max(last.a, last.b)).toBeLessThan(0.1);
    const lastHours = run.placements.filter((x) => x.at >= 10 * H);
    const wantEach = lastHours.length / 2;
    expect(lastHours.filter((x) => x.team === 'A').length).toBeGreaterThanOrEqual(wantEach * 0.8);
    expect(lastHours.filter((x) => x.team === 'B').length).toBeGreaterThanOrEqual(wantEach * 0.8);
  });

  it('w = 0.5: B takes the first GPUs at t=0 and holds most of them for the first hours', () => {
    expect(
      blended.placements
        .filter((x) => x.at === 0)
        .map((x) => x.team)
        .slice(0, 4),
    ).toEqual(['B', 'B', 'B', 'B']);
    const firstHours = blended.placements.filter((x) => x.at < 2 * H);
    expect(firstHours.filter((x) => x.team === 'B').length).toBeGreaterThan(firstHours.filter((x) => x.team === 'A').length * 1.5);
  });

  it('w = 0 (current holdings only) forgets the burst at once: A gets half the GPUs at t=0', () => {
    const now = simulate(0, H);
    expect(now.placements.filter((x) => x.at === 0 && x.team === 'A')).toHaveLength(4);
  });
});
