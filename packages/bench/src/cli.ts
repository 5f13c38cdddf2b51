#!/usr/bin/env node
/**
 * pnpm --silent bench openb [--pods <csv>] [--nodes <csv>] --policy <random|best-fit|fgd|gantry> --seeds 42-51 [--json]
 * pnpm --silent bench openb-grid [--variants gpuspec20,gpuspec25,...] [--trace-seeds 1-2] [--seeds 42-51] [--policies gantry,fgd] [--json]
 * pnpm --silent bench openb-variant --variant gpuspec25 [--trace-seed 1] [--out file.csv]
 * pnpm --silent bench throughput [--nodes 10000] [--jobs N] [--json]
 * pnpm --silent bench load [--jobs 10000] [--clients 200] [--workers 2] [--apis 1] [--rate R] [--nodes N] [--json]
 * pnpm --silent bench snapshot [--nodes 10000] [--allocations 5000] [--changes 200] [--reads 20] [--json]   (the cycle's cluster snapshot: full read vs change log)
 * pnpm --silent bench crash [--kills 50] [--json]
 * pnpm --silent bench kube [--nodes 1000] [--jobs 2000] [--json]   (real kube-apiserver + kube-emulator)
 * pnpm --silent bench mig [--gpus 64] [--seed 42] [--json]   (demand-driven MIG vs static layouts, simulated time)
 * pnpm --silent bench mig-latency [--runs 10] [--json]   (MIG and cold-start latency, real API + worker, speed 1, wall clock)
 * pnpm --silent bench planner [--trace default | --generate N] [--policies gantry,fgd,best-fit,kubernetes-default] [--json]
 * The last line of output is one JSON object.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { loadNodes, loadPods, runOpenb, type Policy } from './openb';
import { gridTable, runGrid } from './openb-grid';
import { makeVariant, parseVariant, specTable, variantCsv } from './openb-variants';
import { writeFileSync } from 'node:fs';
import { repoRoot } from './scratch-db';
import { runThroughput } from './throughput';
import { parseSeeds } from './seeds';
import { coldStartsCommand } from './cold-starts';
import { failoverCommand } from './failover';
import { utilizationCommand } from './utilization';
import { loadCommand } from './load';
import { snapshotCommand } from './snapshot';
import { crashCommand } from './crash';
import { kubeCommand } from './kube/kube-bench';
import { migCommand } from './mig';
import { migLatencyCommand } from './mig-latency';
import { plannerCommand } from './planner';

function args(argv: string[]): { cmd: string; opts: Record<string, string> } {
  const [cmd = 'help', ...rest] = argv;
  const opts: Record<string, string> = {};
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if (!a.startsWith('--')) continue;
    const next = rest[i + 1];
    if (next === undefined || next.startsWith('--')) opts[a.slice(2)] = 'true';
    else {
      opts[a.slice(2)] = next;
      i++;
    }
  }
  return { cmd, opts };
}

function pathArg(p: string): string {
  if (isAbsolute(p)) return p;
  const base = process.env.INIT_CWD ?? process.cwd();
  const a = resolve(base, p);
  if (existsSync(a)) return a;
  return resolve(repoRoot(), p);
}

/** The grid kept in docs/benchmarks.md. */
const GRID_VARIANTS = 'gpuspec10,gpuspec20,gpuspec25,gpuspec33,multigpu30,multigpu40,gpushare60,cpu200,gpuspec20+multigpu40,gpuspec25+multigpu30';

function main(): number {
  const { cmd, opts } = args(process.argv.slice(2));
  if (opts.help === 'true' || process.argv.includes('-h')) {
    process.stdout.write(usage(cmd));
    return 0;
  }
  const json = opts.json === 'true';
  const log = (s: string) => {
    if (!json || opts.verbose === 'true') process.stderr.write(s + '\n');
  };
  const data = resolve(repoRoot(), 'packages/bench/data/openb');
  if (cmd === 'openb') {
    const policy = (opts.policy ?? 'gantry') as Policy;
    if (!['random', 'best-fit', 'fgd', 'gantry'].includes(policy)) {
      process.stderr.write(`unknown policy ${policy} (random | best-fit | fgd | gantry)\n`);
      return 2;
    }
    const pods = opts.pods ? pathArg(opts.pods) : resolve(data, 'openb_pod_list_default.csv');
    const nodes = opts.nodes ? pathArg(opts.nodes) : resolve(data, 'openb_node_list_gpu_node.csv');
    const seeds = parseSeeds(opts.seeds ?? '42-51');
    const r = runOpenb(nodes, pods, policy, seeds, log);
    if (!json) log(`${r.trace} ${r.policy}: unallocated@100 ${r.unallocatedPctAt100}% (sd ${r.sd}), ${r.podsPerSecond} pods/s`);
    process.stdout.write(JSON.stringify(r) + '\n');
    return 0;
  }
  if (cmd === 'openb-grid') {
    const policies = (opts.policies ?? 'gantry,fgd').split(',') as Policy[];
    const bad = policies.find((p) => !['random', 'best-fit', 'fgd', 'gantry'].includes(p));
    if (bad) {
      process.stderr.write(`unknown policy ${bad} (random | best-fit | fgd | gantry)\n`);
      return 2;
    }
    const variants = (opts.variants ?? GRID_VARIANTS).split(',');
    try {
      variants.forEach(parseVariant);
    } catch (e) {
      process.stderr.write(`${(e as Error).message}\n`);
      return 2;
    }
    const cells = runGrid(
      { dataDir: data, variants, traceSeeds: parseSeeds(opts['trace-seeds'] ?? '1-2'), seeds: parseSeeds(opts.seeds ?? '42-51'), policies },
      (s) => process.stderr.write(s + '\n'),
    );
    if (!json) process.stdout.write(gridTable(cells) + '\n');
    process.stdout.write(JSON.stringify({ grid: cells }) + '\n');
    return 0;
  }
  if (cmd === 'openb-variant') {
    let spec;
    try {
      spec = parseVariant(opts.variant ?? '');
    } catch (e) {
      process.stderr.write(`${(e as Error).message}\n`);
      return 2;
    }
    const nodes = loadNodes(resolve(data, 'openb_node_list_gpu_node.csv'));
    const table = specTable(loadPods(resolve(data, 'openb_pod_list_gpuspec10.csv')));
    const pods = makeVariant(loadPods(resolve(data, 'openb_pod_list_default.csv')), spec, Number(opts['trace-seed'] ?? 1), table, nodes);
    const text = variantCsv(pods);
    if (opts.out) writeFileSync(pathArg(opts.out), text);
    else process.stdout.write(text);
    return 0;
  }
  if (cmd === 'throughput') {
    const r = runThroughput({ nodes: Number(opts.nodes ?? 10000), jobs: opts.jobs ? Number(opts.jobs) : undefined, seed: Number(opts.seed ?? 42) }, log);
    process.stdout.write(JSON.stringify(r) + '\n');
    return 0;
  }
  if (cmd === 'failover') return (failoverCommand(opts, log), 0);
  if (cmd === 'utilization') return (utilizationCommand(opts, log), 0);
  if (cmd === 'load') return (loadCommand(opts, log), 0);
  if (cmd === 'snapshot') return (snapshotCommand(opts, log), 0);
  if (cmd === 'crash') return (crashCommand(opts, log), 0);
  if (cmd === 'kube') return (kubeCommand(opts, log), 0);
  if (cmd === 'mig') return (migCommand(opts, log), 0);
  if (cmd === 'mig-latency') return (migLatencyCommand(opts), 0);
  if (cmd === 'planner') return (plannerCommand(opts, log, pathArg), 0);
  if (cmd === 'cold-starts') {
    coldStartsCommand(opts, log);
    return 0;
  }
  process.stderr.write(usage(cmd));
  return cmd === 'help' ? 0 : 2;
}

/** One line per command: what it takes. */
const COMMANDS: Record<string, string> = {
  openb: '[--pods csv] [--nodes csv] --policy random|best-fit|fgd|gantry [--seeds 42-51] [--json]',
  'openb-grid': '[--variants v1,v2] [--trace-seeds 1-2] [--seeds 42-51] [--policies gantry,fgd] [--json]',
  'openb-variant': '--variant gpuspec25 [--trace-seed 1] [--out csv]',
  throughput: '[--nodes 10000] [--jobs N] [--json]',
  load: '[--jobs 10000] [--clients 200] [--workers 2] [--apis 1] [--rate R] [--nodes N] [--json]',
  snapshot: '[--nodes 10000] [--allocations 5000] [--changes 200] [--reads 20] [--json]',
  crash: '[--kills 50] [--json]',
  failover: '[--trials 50] [--burn-in-seconds 0] [--leaves N] [--json]',
  utilization: '[--runs 7] [--days 30] [--nodes 1000] [--keep] [--json]',
  kube: '[--nodes 1000] [--jobs 2000] [--json]',
  mig: '[--gpus 64] [--seed 42] [--json]',
  'mig-latency': '[--runs 10] [--json]',
  planner: '[--trace default | --generate N] [--policies gantry,fgd,best-fit,kubernetes-default] [--compress F] [--no-power] [--json]',
  'cold-starts': '--key K --team T [--api http://127.0.0.1:4000] [--events 20] [--warm-pool 0] [--gpu-model M]',
};

/** Usage of one command, or of them all for `help` or an unknown command. */
function usage(cmd: string): string {
  const names = COMMANDS[cmd] !== undefined ? [cmd] : Object.keys(COMMANDS);
  return names.map((n, i) => `${i === 0 ? 'usage: ' : '       '}bench ${n} ${COMMANDS[n]}\n`).join('');
}

process.exitCode = main();
