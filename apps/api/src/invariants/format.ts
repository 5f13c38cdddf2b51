import type { InvariantReport } from './types';

/** A summary an operator reads: counts, then each violation grouped by rule. */
export function formatReport(r: InvariantReport): string {
  const c = r.counts;
  const lines = [
    `invariants (${r.settled ? 'strict + settled' : 'strict'}) at ${r.checkedAt}: ${r.ok ? 'OK' : `${r.violations.length} violation(s)`}`,
    `  checked ${c.jobs} jobs, ${c.activeAllocations} active allocations, ${c.gpus} GPUs, ${c.migSlices} MIG slices, ${c.endpointReplicas} endpoint replicas`,
  ];
  const byRule = new Map<string, string[]>();
  for (const v of r.violations) byRule.set(v.rule, [...(byRule.get(v.rule) ?? []), `    ${v.subject}: ${v.message}`]);
  for (const [rule, items] of byRule)
    lines.push(`  ${rule} (${items.length}):`, ...items.slice(0, 20), ...(items.length > 20 ? [`    ... and ${items.length - 20} more`] : []));
  return lines.join('\n');
}
