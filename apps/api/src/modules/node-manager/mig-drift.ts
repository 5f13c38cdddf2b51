/**
 * MIG drift (pure): where the database's MIG layouts and the cluster's disagree, and what to do.
 * The driver is the truth for what exists (a slice the driver lacks cannot take work); the
 * database is the truth for what was wanted (an operator's or the planner's layout). After a
 * restart of a simulated cluster, a node re-imaged, or a layout changed outside Gantry:
 *   - `reapply`: the database's rows take the driver's layout (what exists) and the wanted layout
 *     is applied again through the MIG manager (the GPU stays out of scheduling until it is);
 *   - `adopt`: the wanted layout cannot be applied (GPU not MIG-capable, node runs VMs, layout
 *     invalid for the model): the database takes the driver's layout and the GPU stays in scheduling.
 * A GPU whose change is in flight is left to the MIG manager (it applies against the driver).
 */
import { validateMigLayout } from '@gantry/scheduler';
import { layoutKey } from './mig-layout-key';

export interface MigSlot {
  profile: string;
  start: number;
}

export interface DbGpuLayout {
  gpuId: string;
  nodeName: string;
  index: number;
  model: string;
  migCapable: boolean;
  /** The node runs VMs (vm-passthrough): its GPUs go whole to VMs, MIG does not apply. */
  vmNode: boolean;
  mode: 'whole' | 'mig' | 'shared';
  layout: MigSlot[];
  /** A MIG change in flight (migTarget set). */
  changing: boolean;
}

export interface DriverGpuLayout {
  nodeName: string;
  index: number;
  layout: MigSlot[];
}

export interface MigDrift {
  gpuId: string;
  nodeName: string;
  index: number;
  action: 'reapply' | 'adopt';
  /** What the driver has (stored as the GPU's slices). */
  existing: MigSlot[];
  /** What the database wanted (re-applied for `reapply`). */
  wanted: MigSlot[];
  why: string;
}

const text = (l: readonly MigSlot[]) => (l.length ? layoutKey(l) : 'MIG off');

export function findMigDrift(db: readonly DbGpuLayout[], driver: readonly DriverGpuLayout[]): MigDrift[] {
  const seen = new Map(driver.map((g) => [`${g.nodeName}/${g.index}`, g.layout]));
  const out: MigDrift[] = [];
  for (const g of db) {
    const existing = seen.get(`${g.nodeName}/${g.index}`);
    // A GPU the driver does not report is failover's business (node lost); a change in flight, the MIG manager's.
    if (!existing || g.changing) continue;
    const wanted = g.mode === 'mig' ? g.layout : [];
    if (layoutKey(wanted) === layoutKey(existing)) continue;
    const base = { gpuId: g.gpuId, nodeName: g.nodeName, index: g.index, existing, wanted };
    const differ = `the cluster has ${text(existing)}, the database wanted ${text(wanted)}`;
    const blocked = !g.migCapable
      ? 'the GPU is not MIG-capable'
      : g.vmNode && wanted.length
        ? 'the node runs the vm-passthrough persona'
        : wanted.length && !validateMigLayout(g.model, wanted).ok
          ? `the wanted layout is not valid on ${g.model}`
          : null;
    out.push(
      blocked
        ? { ...base, action: 'adopt', why: `${differ}; ${blocked}: the cluster's layout is kept` }
        : { ...base, action: 'reapply', why: `${differ}; re-applying it` },
    );
  }
  return out;
}
