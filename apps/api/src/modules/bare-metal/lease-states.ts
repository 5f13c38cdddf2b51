/**
 * Bare-metal lease states (docs/bare-metal.md), pure: the lease's state follows its nodes' steps,
 * and which idle nodes a queued lease takes next.
 */
import type { BareMetalLeaseState, BareMetalNodeState } from '@gantry/contracts';

/** Database spelling of a node step (`powering_off`) and the API's (`powering-off`). */
export type DbNodeStep = 'provisioning' | 'deployed' | 'powering_off' | 'powered_off' | 'powering_on' | 'deprovisioning';
export const nodeStepToApi = (s: DbNodeStep): BareMetalNodeState => s.replace('_', '-') as BareMetalNodeState;

/** Steps a worker must still run through the driver. */
export const STEPS_IN_FLIGHT: readonly DbNodeStep[] = ['provisioning', 'powering_off', 'powering_on', 'deprovisioning'];

/**
 * The lease's state once its nodes' steps are counted, or null when it stays as it is:
 * a queued lease holding all its nodes is provisioning (deployed once they all are), a release
 * is done when no node is left, a suspend when every node is off, a resume when every node is up.
 */
export function settledLeaseState(lease: { state: BareMetalLeaseState; count: number }, steps: readonly DbNodeStep[]): BareMetalLeaseState | null {
  const all = (s: DbNodeStep) => steps.length > 0 && steps.every((x) => x === s);
  switch (lease.state) {
    case 'pending':
      if (steps.length < lease.count) return null;
      return all('deployed') ? 'deployed' : 'provisioning';
    case 'provisioning':
      return steps.length >= lease.count && all('deployed') ? 'deployed' : null;
    case 'suspending':
      return all('powered_off') ? 'suspended' : null;
    case 'resuming':
      return all('deployed') ? 'deployed' : null;
    case 'releasing':
      return steps.length === 0 ? 'released' : null;
    default:
      return null;
  }
}

export interface IdleNode {
  id: string;
  name: string;
  leaf: string;
}

/**
 * The idle nodes a queued lease takes now (look-ahead: each idle node is taken as soon as it is
 * idle, before the whole set is, so that container work does not fill it meanwhile). A multi-node
 * set (`sameLeaf`) stays under the leaf of the nodes it holds; its first node goes under the leaf
 * with the most idle nodes (then by name).
 */
export function pickIdleNodes(idle: readonly IdleNode[], want: { need: number; sameLeaf: boolean; heldLeaves: readonly string[] }): IdleNode[] {
  if (want.need <= 0) return [];
  const byName = [...idle].sort((a, b) => a.name.localeCompare(b.name));
  if (!want.sameLeaf) return byName.slice(0, want.need);
  let leaf = want.heldLeaves[0];
  if (leaf === undefined) {
    const counts = new Map<string, number>();
    for (const n of byName) counts.set(n.leaf, (counts.get(n.leaf) ?? 0) + 1);
    leaf = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0];
  }
  return byName.filter((n) => n.leaf === leaf).slice(0, want.need);
}
