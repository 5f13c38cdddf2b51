/**
 * The openb traces kept in the repository (packages/bench/data/openb, docs/openb.md): located
 * from this package's own directory (src/ or dist/), never downloaded.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Problems } from './input-error';

/** Traces with creation, scheduled and deletion times (multigpu20 has no times and cannot be replayed over time). */
export const OPENB_TRACES = ['default', 'cpu050', 'gpushare40', 'gpuspec10'] as const;
export type OpenbTrace = (typeof OPENB_TRACES)[number];

export function openbDataDir(): string {
  return resolve(__dirname, '../../bench/data/openb');
}

export function readOpenbTrace(name: string): string {
  if (!(OPENB_TRACES as readonly string[]).includes(name)) {
    const p = new Problems('workload');
    p.add(null, 'trace', `unknown openb trace ${JSON.stringify(name)} (known: ${OPENB_TRACES.join(', ')})`);
    p.throwIfAny();
  }
  return readFileSync(resolve(openbDataDir(), `openb_pod_list_${name}.csv`), 'utf8');
}

export function readOpenbNodes(): string {
  return readFileSync(resolve(openbDataDir(), 'openb_node_list_gpu_node.csv'), 'utf8');
}
