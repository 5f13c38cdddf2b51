#!/usr/bin/env node
/**
 * pnpm --silent bench openb [--pods <csv>] [--nodes <csv>] --policy <random|best-fit|fgd|gantry> --seeds 42-51 [--json]
 * pnpm --silent bench throughput [--nodes 10000] [--jobs N] [--json]
 * pnpm --silent bench load [--jobs 10000] [--clients 200] [--workers 2] [--rate R] [--nodes N] [--json]
 * pnpm --silent bench crash [--kills 50] [--json]
 * pnpm --silent bench kube [--nodes 1000] [--jobs 2000] [--json]   (real kube-apiserver + kube-emulator)
 * The last line of output is one JSON object.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { runOpenb, type Policy } from './openb';
import { repoRoot } from './scratch-db';
import { runThroughput } from './throughput';
import { parseSeeds } from './seeds';
import { coldStartsCommand } from './cold-starts';
import { failoverCommand } from './failover';
import { utilizationCommand } from './utilization';
import { loadCommand } from './load';
import { crashCommand } from './crash';
import { kubeCommand } from './kube/kube-bench';

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

function main(): number {
  const { cmd, opts } = args(process.argv.slice(2));
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
  if (cmd === 'throughput') {
    const r = runThroughput({ nodes: Number(opts.nodes ?? 10000), jobs: opts.jobs ? Number(opts.jobs) : undefined, seed: Number(opts.seed ?? 42) }, log);
    process.stdout.write(JSON.stringify(r) + '\n');
    return 0;
  }
  if (cmd === 'failover') return (failoverCommand(opts, log), 0);
  if (cmd === 'utilization') return (utilizationCommand(opts, log), 0);
  if (cmd === 'load') return (loadCommand(opts, log), 0);
  if (cmd === 'crash') return (crashCommand(opts, log), 0);
  if (cmd === 'kube') return (kubeCommand(opts, log), 0);
  if (cmd === 'cold-starts') {
    coldStartsCommand(opts, log);
    return 0;
  }
  process.stderr.write(
    'usage: bench openb [--pods csv] [--nodes csv] --policy random|best-fit|fgd|gantry --seeds 42-51 [--json]\n       bench throughput [--nodes 10000] [--jobs N] [--json]\n       bench kube [--nodes 1000] [--jobs 2000] [--json]\n',
  );
  return cmd === 'help' ? 0 : 2;
}

process.exitCode = main();
