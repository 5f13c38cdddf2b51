/**
 * From a run's specification (the API's body, @gantry/contracts ZPlannerRunCreate) to the
 * planner's input: reads the openb files or parses the CSVs, generates, applies the what-if
 * edits. Throws PlannerInputError naming the row and field of what is wrong.
 */
import type { PlannerRunSpec } from '@gantry/contracts';
import { applyEdits, applyMigPolicies, checkFeasible, parseOpenbNodes, type PlannerNode } from './cluster';
import { Problems } from './input-error';
import { readOpenbNodes, readOpenbTrace } from './openb-data';
import { DEFAULT_POWER } from './power';
import type { PlanInput } from './plan';
import { validatePolicies } from './plan';
import { generateWorkload, parseOpenbTrace, scaleArrivals, type PlannerJob } from './workload';

/**
 * What the caller read from the database for a `history` workload or an `inventory` cluster
 * (the planner itself does no I/O beyond the in-repository openb files).
 */
export interface SuppliedInput {
  /** The job history (arrivals from 0, sorted). */
  jobs?: PlannerJob[];
  /** The live inventory, or the nodes of a topology file. */
  nodes?: PlannerNode[];
}

export function resolveSpec(spec: PlannerRunSpec, supplied: SuppliedInput = {}): PlanInput {
  const w = spec.workload;
  let jobs: PlannerJob[] =
    w.kind === 'openb'
      ? parseOpenbTrace(readOpenbTrace(w.trace), 'workload')
      : w.kind === 'csv'
        ? parseOpenbTrace(w.csv, 'workload.csv')
        : w.kind === 'history'
          ? historyJobs(supplied.jobs, w.days)
          : generateWorkload({ jobs: w.jobs, meanInterarrival: w.meanInterarrivalSeconds, meanDuration: w.meanDurationSeconds, mix: w.mix, seed: w.seed });
  if (spec.compress !== 1) jobs = scaleArrivals(jobs, spec.compress);
  const c = spec.cluster;
  let nodes: PlannerNode[] =
    c.kind === 'openb' ? parseOpenbNodes(readOpenbNodes()) : c.kind === 'csv' ? parseOpenbNodes(c.csv, 'cluster.csv') : suppliedNodes(supplied.nodes, c.kind);
  if (c.kind === 'openb' && c.size) nodes = nodes.slice(0, c.size);
  nodes = applyEdits(nodes, spec.edits);
  nodes = applyMigPolicies(nodes, spec.mig);
  const policies = validatePolicies(spec.policies);
  checkFeasible(nodes, jobs);
  return { nodes, jobs, policies, power: spec.power === undefined ? { ...DEFAULT_POWER } : spec.power, seed: spec.seed };
}

function historyJobs(jobs: PlannerJob[] | undefined, days: number): PlannerJob[] {
  if (!jobs) throw new Error('a history workload needs the job history read by the caller');
  const p = new Problems('workload.history');
  if (jobs.length === 0) p.add(null, 'days', `no job ran in the last ${days} days`);
  p.throwIfAny();
  return jobs.map((j) => ({ ...j, request: { ...j.request } }));
}

function suppliedNodes(nodes: PlannerNode[] | undefined, kind: string): PlannerNode[] {
  if (!nodes) throw new Error(`a cluster of kind ${kind} needs its nodes read by the caller`);
  return nodes.map((n) => ({ ...n }));
}
