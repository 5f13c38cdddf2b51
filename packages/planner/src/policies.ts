/**
 * The policies the planner compares. Three are Gantry engine profiles (`gantry`, `fgd`,
 * `best-fit`); `kubernetes-default` emulates stock kube-scheduler with the NVIDIA device plugin
 * on the same engine (docs/planner.md, "The emulated baseline"):
 *   - integer nvidia.com/gpu only: a share or a MIG request takes one whole GPU, no sharing and
 *     no MIG re-partitioning (on a cluster with a MIG policy, a MIG request takes a free slice of
 *     its profile: the device plugin's mixed strategy);
 *   - scoring = NodeResourcesFit LeastAllocated + NodeResourcesBalancedAllocation, weight 1 each,
 *     over CPU and memory (the resources kube-scheduler scores by default; nvidia.com/gpu is an
 *     extended resource and is not scored), integer scores 0..100;
 *   - no gang or topology awareness (a topology requirement is dropped), no power management.
 */
import {
  PROFILES,
  defaultPluginRegistry,
  type Engine,
  type NodeView,
  type Profile,
  type ReplicaRequest,
  type ScorePlugin,
  type ShapeCount,
} from '@gantry/scheduler';
import type { PlannerJob } from './workload';

export const POLICIES = ['gantry', 'fgd', 'best-fit', 'kubernetes-default'] as const;
export type PolicyName = (typeof POLICIES)[number];

export interface PolicySetup {
  name: PolicyName;
  profile: Profile;
  plugins: ReturnType<typeof defaultPluginRegistry>;
  /** Learn the shape mix from every arrival (Engine.submit) rather than only place. */
  learn: boolean;
  /** The request as this policy's scheduler sees it. */
  request(job: PlannerJob): ReplicaRequest;
  topology(job: PlannerJob): { level: 'node' | 'leaf' | 'spine' | 'any'; required: boolean };
  /** Whether the planner's power management may run under this policy. */
  powerManaged: boolean;
}

/** LeastAllocated over CPU and memory: mean of (free after / capacity) x 100, truncated to an integer. */
function leastAllocated(): ScorePlugin {
  return {
    name: 'k8s-least-allocated',
    score(_s, job, n: NodeView) {
      const cpu = Math.floor(((n.cpuFree - job.cpu) * 100) / Math.max(1, n.cpuMilli));
      const mem = Math.floor(((n.memFree - job.mem) * 100) / Math.max(1, n.memoryMiB));
      return Math.floor((cpu + mem) / 2);
    },
  };
}

/** BalancedAllocation over CPU and memory: (1 - |cpu fraction - memory fraction|) x 100, truncated (two resources: std = |d| / 2, score = (1 - std) x 100 since v1.23). */
function balancedAllocation(): ScorePlugin {
  return {
    name: 'k8s-balanced-allocation',
    score(_s, job, n: NodeView) {
      const cpuFrac = Math.min(1, (n.cpuMilli - n.cpuFree + job.cpu) / Math.max(1, n.cpuMilli));
      const memFrac = Math.min(1, (n.memoryMiB - n.memFree + job.mem) / Math.max(1, n.memoryMiB));
      return Math.floor((1 - Math.abs(cpuFrac - memFrac) / 2) * 100);
    },
  };
}

function registry(): ReturnType<typeof defaultPluginRegistry> {
  const r = defaultPluginRegistry();
  r.register('k8s-least-allocated', () => leastAllocated());
  r.register('k8s-balanced-allocation', () => balancedAllocation());
  return r;
}

const KUBERNETES_DEFAULT: Profile = {
  name: 'kubernetes-default',
  preFilter: ['request'],
  filter: ['node-ready', 'persona', 'node-resources', 'gpu-model', 'gpu-capacity'],
  score: [
    { name: 'k8s-least-allocated', weight: 1 },
    { name: 'k8s-balanced-allocation', weight: 1 },
  ],
  reserve: ['team-usage'],
  permit: ['gang'],
  shareOrder: 'index',
};

/** The integer-GPU view of a request (device plugin without time-slicing or MIG strategy). */
export function wholeGpuRequest(r: ReplicaRequest): ReplicaRequest {
  const out: ReplicaRequest = { cpuMilli: r.cpuMilli, memoryMiB: r.memoryMiB };
  if (r.gpus) out.gpus = r.gpus;
  else if (r.gpuMilli || r.migProfile) out.gpus = 1;
  if (r.gpuModels?.length) out.gpuModels = r.gpuModels;
  return out;
}

/**
 * `migSlices`: the cluster has GPUs in MIG mode (a what-if MIG policy). Then the device plugin's
 * mixed strategy advertises their slices (`nvidia.com/mig-<profile>`) and kube-scheduler places
 * a MIG request on a free slice of that profile, as the engine does; it never re-partitions.
 */
export function policySetup(name: PolicyName, shapes: ShapeCount[], opts: { migSlices?: boolean } = {}): PolicySetup {
  const plugins = registry();
  const asIs = (j: PlannerJob) => j.request;
  const gantryTopology = (_j: PlannerJob) => ({ level: 'any' as const, required: false });
  switch (name) {
    case 'gantry':
      return { name, profile: PROFILES.gantry!, plugins, learn: true, request: asIs, topology: gantryTopology, powerManaged: true };
    case 'best-fit':
      return { name, profile: PROFILES['best-fit']!, plugins, learn: false, request: asIs, topology: gantryTopology, powerManaged: true };
    case 'fgd':
      return {
        name,
        profile: { ...PROFILES.fgd!, args: { fgd: { shapes } } },
        plugins,
        learn: false,
        request: asIs,
        topology: gantryTopology,
        powerManaged: true,
      };
    case 'kubernetes-default':
      return {
        name,
        profile: KUBERNETES_DEFAULT,
        plugins,
        learn: false,
        request: (j) => (opts.migSlices && j.request.migProfile ? j.request : wholeGpuRequest(j.request)),
        topology: gantryTopology,
        powerManaged: false,
      };
  }
}

/** FGD's "typical pods": the request shapes of the workload with their counts (memory ignored). */
export function workloadShapes(jobs: PlannerJob[]): ShapeCount[] {
  const m = new Map<string, ShapeCount>();
  for (const j of jobs) {
    const r = j.request;
    const key = `${r.cpuMilli}|${r.gpuMilli ?? (r.gpus ? 1000 : 0)}|${r.gpus ?? (r.gpuMilli ? 1 : 0)}|${r.gpuModels?.join('|') ?? ''}`;
    const c = m.get(key);
    if (c) c.count++;
    else m.set(key, { request: { ...r, memoryMiB: 0 }, count: 1 });
  }
  return [...m.values()];
}

export type { Engine };
