/**
 * Turns a start request's replicas into GPU claims, checked against the cluster: the node is up
 * and not switching persona, the GPU exists and is healthy, a MIG slice exists in the GPU's
 * layout (the first free one of the profile when no start is given), whole GPUs and shares are
 * not asked of a GPU in MIG mode, and nothing collides with what other jobs hold.
 */
import type { StartRequest } from '../types';
import { BURN_IN_KIND } from '../shared/burn-in';
import type { SimCluster } from './cluster-state';
import { claimConflict, type GpuClaim, type HeldGpuClaim } from './gpu-claims';

export function resolveReplicaClaims(cluster: SimCluster, request: StartRequest, heldOn: (nodeName: string) => readonly HeldGpuClaim[]): GpuClaim[] {
  if (request.replicas.length === 0) throw new Error(`job ${request.jobId} has no replicas`);
  // what other jobs hold on each node of the request, and this request's own claims so far
  const takenOn = new Map<string, HeldGpuClaim[]>();
  const claims: GpuClaim[] = [];
  for (const replica of request.replicas) {
    const node = cluster.upNode(replica.nodeName);
    if (node.switchingPersona) throw new Error(`node ${node.name} is switching persona`);
    const taken = takenOn.get(node.name) ?? [...heldOn(node.name)];
    takenOn.set(node.name, taken);
    for (const want of replica.gpus) {
      const gpu = cluster.gpu(node, want.index);
      const where = `GPU ${gpu.index} of node ${node.name}`;
      if (!gpu.healthy) throw new Error(`${where} is unhealthy`);
      let claim: GpuClaim;
      if (want.migProfile !== undefined) {
        const candidates = gpu.migLayout.filter((s) => s.profile === want.migProfile && (want.migStart === undefined || s.start === want.migStart));
        if (candidates.length === 0) {
          const at = want.migStart === undefined ? '' : `@${want.migStart}`;
          throw new Error(`${where} has no MIG slice ${want.migProfile}${at} in its layout`);
        }
        const isTaken = (start: number) => taken.some((t) => t.kind === 'mig' && t.nodeName === node.name && t.gpuIndex === gpu.index && t.start === start);
        const slice = candidates.find((s) => !isTaken(s.start)) ?? candidates[0];
        claim = { nodeName: node.name, gpuIndex: gpu.index, kind: 'mig', profile: slice.profile, start: slice.start };
      } else {
        // a burn-in diagnostic takes the whole GPU, MIG mode or not (no slice may be in use)
        if (gpu.migLayout.length > 0 && request.kind !== BURN_IN_KIND) throw new Error(`${where} is in MIG mode: ask for one of its slices`);
        claim =
          want.milli === undefined
            ? { nodeName: node.name, gpuIndex: gpu.index, kind: 'whole' }
            : { nodeName: node.name, gpuIndex: gpu.index, kind: 'share', milli: want.milli };
      }
      const conflict = claimConflict(taken, claim);
      if (conflict) throw new Error(`cannot start job ${request.jobId}: ${conflict}`);
      taken.push({ ...claim, jobId: request.jobId });
      claims.push(claim);
    }
  }
  return claims;
}
