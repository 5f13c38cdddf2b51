/**
 * The demo's synthetic workload: what a few teams submit over some days, with a daily rhythm
 * (notebooks and batch inference by day, training at night, less at weekends), some MIG
 * notebooks and a GPU fault or two. Pure and seeded: the same teams, start and seed give the
 * same jobs. What becomes of them (where and when they run) is the scheduling engine's answer
 * in the replay (demo-replay.ts), not decided here.
 */
import { PRIORITY_VALUE, type JobResources, type Priority } from '@gantry/contracts';
import { mulberry32, type PlannerJob } from '@gantry/planner';
import { replicaRequest } from '../planner/planner-inputs';

export interface DemoTeam {
  id: string;
  tenantId: string;
  slug: string;
  /** The team's GPU limit (its `*` quota): how much it submits scales with it. */
  limit: number;
}

export type DemoJobKind = 'training' | 'batch' | 'notebook';

/** A planner job with what the Job row needs. */
export interface DemoJob extends PlannerJob {
  tenantId: string;
  name: string;
  kind: DemoJobKind;
  priorityName: Priority;
  resources: JobResources;
  /** Seconds of running after which an Xid 79 takes the job's first GPU away (then it is rescheduled). */
  faultAfter?: number;
}

export interface DemoWeekOptions {
  teams: readonly DemoTeam[];
  /** Wall-clock ms of replay time 0 (the past's first instant). */
  startMs: number;
  /** Seconds of arrivals. */
  seconds: number;
  /** MIG slices the cluster offers in the replay (A100 nodes carrying a MIG layout), if any. */
  mig?: { gpuModel: string; profile: string };
  /** GPU faults to inject into training runs. */
  faults: number;
  seed: number;
}

interface Shape {
  kind: DemoJobKind;
  prefix: string;
  priorityName: Priority;
  /** Arrivals per hour per GPU of the team's limit, by day (08:00-19:00 UTC) and by night. */
  perLimitGpu: { day: number; night: number };
  /** Mean run time, seconds (exponential, clamped to [min, max]). */
  meanSeconds: number;
  minSeconds: number;
  maxSeconds: number;
  resources: (rand: () => number, o: DemoWeekOptions) => JobResources;
  replicas: (rand: () => number) => number;
}

const pick = <T>(rand: () => number, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

const NOTEBOOK: Shape = {
  kind: 'notebook',
  prefix: 'notebook',
  priorityName: 'high',
  perLimitGpu: { day: 1 / 15, night: 1 / 200 },
  meanSeconds: 2 * 3600,
  minSeconds: 20 * 60,
  maxSeconds: 6 * 3600,
  resources: (rand, o) =>
    o.mig && rand() < 0.4
      ? { migProfile: o.mig.profile, gpuModel: o.mig.gpuModel, cpuMilli: 4000, memoryMiB: 16384 }
      : rand() < 0.5
        ? { gpuFraction: pick(rand, [0.25, 0.5]), cpuMilli: 4000, memoryMiB: 16384 }
        : { gpus: 1, cpuMilli: 8000, memoryMiB: 32768 },
  replicas: () => 1,
};

const BATCH_INFERENCE: Shape = {
  kind: 'batch',
  prefix: 'batch-infer',
  priorityName: 'normal',
  perLimitGpu: { day: 1 / 20, night: 1 / 100 },
  meanSeconds: 50 * 60,
  minSeconds: 10 * 60,
  maxSeconds: 3 * 3600,
  resources: (rand) => ({ gpus: pick(rand, [1, 1, 2, 4]), cpuMilli: 16000, memoryMiB: 65536 }),
  replicas: () => 1,
};

const TRAINING: Shape = {
  kind: 'training',
  prefix: 'train',
  priorityName: 'normal',
  perLimitGpu: { day: 1 / 400, night: 1 / 50 },
  meanSeconds: 5 * 3600,
  minSeconds: 2 * 3600,
  maxSeconds: 10 * 3600,
  resources: (rand) => ({ gpus: pick(rand, [4, 8, 8]), cpuMilli: 32000, memoryMiB: 262144 }),
  replicas: (rand) => pick(rand, [1, 1, 2]),
};

/** What each team runs: an inference team mostly batch inference, the others all three. */
function shapesOf(team: DemoTeam): { shape: Shape; weight: number }[] {
  if (/infer/i.test(team.slug))
    return [
      { shape: BATCH_INFERENCE, weight: 5 },
      { shape: NOTEBOOK, weight: 0.5 },
    ];
  return [
    { shape: TRAINING, weight: 1 },
    { shape: NOTEBOOK, weight: 1 },
    { shape: BATCH_INFERENCE, weight: 0.5 },
  ];
}

/** Knuth's Poisson sampler (small means). */
function poisson(rand: () => number, mean: number): number {
  const l = Math.exp(-mean);
  let k = 0;
  let p = rand();
  while (p > l) {
    k++;
    p *= rand();
  }
  return k;
}

/** UTC day-time (08:00-19:00) and weekend factor of an instant. */
function rhythm(ms: number): { day: boolean; weekend: boolean } {
  const d = new Date(ms);
  const h = d.getUTCHours();
  const wd = d.getUTCDay();
  return { day: h >= 8 && h < 19, weekend: wd === 0 || wd === 6 };
}

/** The jobs, sorted by arrival (seconds from `startMs`). */
export function demoWeek(o: DemoWeekOptions): DemoJob[] {
  const rand = mulberry32(o.seed);
  const jobs: DemoJob[] = [];
  const counts = new Map<string, number>();
  for (let hour = 0; hour * 3600 < o.seconds; hour++) {
    const { day, weekend } = rhythm(o.startMs + hour * 3600_000);
    for (const team of o.teams) {
      for (const { shape, weight } of shapesOf(team)) {
        const mean = team.limit * weight * (day ? shape.perLimitGpu.day : shape.perLimitGpu.night) * (weekend ? 0.35 : 1);
        for (let n = poisson(rand, mean); n > 0; n--) {
          const arrival = Math.round(hour * 3600 + rand() * 3600);
          if (arrival >= o.seconds) continue;
          const duration = Math.round(Math.min(shape.maxSeconds, Math.max(shape.minSeconds, -Math.log(1 - rand()) * shape.meanSeconds)));
          const resources = shape.resources(rand, o);
          const key = `${team.slug}/${shape.prefix}`;
          const seq = (counts.get(key) ?? 0) + 1;
          counts.set(key, seq);
          jobs.push({
            id: `${team.id}:${shape.prefix}:${seq}`,
            teamId: team.id,
            tenantId: team.tenantId,
            name: `${shape.prefix}-${String(seq).padStart(3, '0')}`,
            kind: shape.kind,
            priorityName: shape.priorityName,
            priority: PRIORITY_VALUE[shape.priorityName],
            arrival,
            duration,
            replicas: shape.replicas(rand),
            resources,
            request: replicaRequest(resources),
          });
        }
      }
    }
  }
  jobs.sort((a, b) => a.arrival - b.arrival || (a.id < b.id ? -1 : 1));
  // Faults: training runs of the middle of the span (not the first or last day) lose a GPU mid-run.
  const candidates = jobs.filter((j) => j.kind === 'training' && j.arrival > o.seconds * 0.2 && j.arrival < o.seconds * 0.8);
  for (let f = 0; f < o.faults && candidates.length; f++) {
    const j = candidates.splice(Math.floor(rand() * candidates.length), 1)[0]!;
    j.faultAfter = Math.round(j.duration * (0.3 + 0.4 * rand()));
  }
  return jobs;
}
