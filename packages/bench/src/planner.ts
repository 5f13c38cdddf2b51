/**
 * pnpm --silent bench planner [--trace default | --generate N] [--nodes <csv>] [--policies a,b]
 *   [--compress F] [--no-power] [--seed 42] [--json]
 * Replays a workload over simulated time under the planner's policies (packages/planner,
 * docs/planner.md). The last line: per policy the headline figures, and gantryVsKubernetesDefault.
 */
import { readFileSync } from 'node:fs';
import {
  POLICIES,
  generateWorkload,
  parseOpenbNodes,
  parseOpenbTrace,
  readOpenbNodes,
  readOpenbTrace,
  runPlan,
  scaleArrivals,
  type PlannerNode,
} from '@gantry/planner';

export function plannerCommand(opts: Record<string, string>, log: (s: string) => void, pathArg: (p: string) => string): void {
  const policies = (opts.policies ?? POLICIES.join(',')).split(',').filter(Boolean);
  const seed = Number(opts.seed ?? 42);
  let nodes: PlannerNode[] = opts.nodes ? parseOpenbNodes(readFileSync(pathArg(opts.nodes), 'utf8')) : parseOpenbNodes(readOpenbNodes());
  if (opts['cluster-size']) nodes = nodes.slice(0, Number(opts['cluster-size']));
  let jobs = opts.generate
    ? generateWorkload({
        jobs: Number(opts.generate),
        meanInterarrival: Number(opts['mean-interarrival'] ?? 60),
        meanDuration: Number(opts['mean-duration'] ?? 3600),
        mix: { share: Number(opts.share ?? 0.6), whole: Number(opts.whole ?? 0.35), multi: Number(opts.multi ?? 0.05) },
        gpuModels: opts['gpu-models'] ? opts['gpu-models'].split(',') : undefined,
        seed,
      })
    : opts.pods
      ? parseOpenbTrace(readFileSync(pathArg(opts.pods), 'utf8'))
      : parseOpenbTrace(readOpenbTrace(opts.trace ?? 'default'));
  if (opts.compress) jobs = scaleArrivals(jobs, Number(opts.compress));
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  const r = runPlan(
    { nodes, jobs, policies, seed, power: opts['no-power'] === 'true' ? null : undefined },
    {
      onPlanProgress: (f, p) => log(`${(f * 100).toFixed(0)}% (${p})`),
    },
  );
  const wallSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const c = process.cpuUsage(c0);
  const out: Record<string, unknown> = {
    workload: opts.generate ? `generated:${opts.generate}` : (opts.pods ?? opts.trace ?? 'default'),
    compress: opts.compress ? Number(opts.compress) : 1,
    nodes: r.nodes,
    gpus: r.gpus,
    jobs: r.jobs,
    horizonSeconds: r.horizonSeconds,
    power: r.power,
  };
  for (const p of r.policies) {
    log(
      `${p.policy.padEnd(19)} util ${p.gpuUtilisationPct}%  mem ${p.gpuMemoryUsePct}%  energy ${p.energyKWh} kWh (no PM ${p.energyWithoutPowerManagementKWh})  wait p50/p95/max ${p.waitP50Seconds}/${p.waitP95Seconds}/${p.waitMaxSeconds} s  unplaced ${p.unplaced}`,
    );
    out[p.policy] = {
      gpuUtilisationPct: p.gpuUtilisationPct,
      gpuMemoryUsePct: p.gpuMemoryUsePct,
      energyKWh: p.energyKWh,
      waitP50Seconds: p.waitP50Seconds,
      waitP95Seconds: p.waitP95Seconds,
      unplaced: p.unplaced,
      gpuAllocationPct: p.gpuAllocationPct,
      clusterSmUtilisationPct: p.clusterSmUtilisationPct,
      smPerBusyGpuPct: p.smPerBusyGpuPct,
      memoryPerBusyGpuPct: p.memoryPerBusyGpuPct,
      energyWithoutPowerManagementKWh: p.energyWithoutPowerManagementKWh,
      waitMaxSeconds: p.waitMaxSeconds,
      fragmentationPct: p.fragmentationPct,
      powerDowns: p.powerDowns,
      powerUps: p.powerUps,
      cpuSeconds: p.cpuSeconds,
    };
  }
  out.gantryVsKubernetesDefault = r.gantryVsKubernetesDefault;
  out.wallSeconds = Math.round(wallSeconds * 10) / 10;
  out.cpuSeconds = Math.round(((c.user + c.system) / 1e6) * 10) / 10;
  process.stdout.write(JSON.stringify(out) + '\n');
}
