/**
 * From a run's specification (the API's body, @gantry/contracts ZPlannerRunCreate) to the
 * planner's input: reads the openb files or parses the CSVs, generates, applies the what-if
 * edits. Throws PlannerInputError naming the row and field of what is wrong.
 */
import type { PlannerRunSpec } from '@gantry/contracts';
import { applyEdits, checkFeasible, parseOpenbNodes, type PlannerNode } from './cluster';
import { readOpenbNodes, readOpenbTrace } from './openb-data';
import { DEFAULT_POWER } from './power';
import type { PlanInput } from './plan';
import { validatePolicies } from './plan';
import { generateWorkload, parseOpenbTrace, scaleArrivals, type PlannerJob } from './workload';

export function resolveSpec(spec: PlannerRunSpec): PlanInput {
  const w = spec.workload;
  let jobs: PlannerJob[] =
    w.kind === 'openb'
      ? parseOpenbTrace(readOpenbTrace(w.trace), 'workload')
      : w.kind === 'csv'
        ? parseOpenbTrace(w.csv, 'workload.csv')
        : generateWorkload({ jobs: w.jobs, meanInterarrival: w.meanInterarrivalSeconds, meanDuration: w.meanDurationSeconds, mix: w.mix, seed: w.seed });
  if (spec.compress !== 1) jobs = scaleArrivals(jobs, spec.compress);
  const c = spec.cluster;
  let nodes: PlannerNode[] = c.kind === 'openb' ? parseOpenbNodes(readOpenbNodes()) : parseOpenbNodes(c.csv, 'cluster.csv');
  if (c.kind === 'openb' && c.size) nodes = nodes.slice(0, c.size);
  nodes = applyEdits(nodes, spec.edits);
  const policies = validatePolicies(spec.policies);
  checkFeasible(nodes, jobs);
  return { nodes, jobs, policies, power: spec.power === undefined ? { ...DEFAULT_POWER } : spec.power, seed: spec.seed };
}
