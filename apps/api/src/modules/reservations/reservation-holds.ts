/**
 * Which GPUs a reservation holds (docs/reservations.md). Pure: the scheduling cycle passes in
 * the cluster's GPUs with who uses them, and the windows open now or starting soon.
 *
 * A reservation does not own fixed GPUs: each cycle picks, per window, the GPUs of its model that
 * cost the least to hand over, in this order: GPUs its team already uses and free GPUs, then GPUs
 * that other teams' preemptible work uses, and last GPUs held by work that cannot be preempted.
 * Nodes are taken whole, best node first, so a held set stays packed (a gang of 8-GPU replicas
 * fits) and stays put from one cycle to the next: the work the hold lets on is exactly the work
 * that ranks its GPUs cheap.
 */

export interface HoldGpuUser {
  /** Null: an endpoint replica (never preempted for a reservation). */
  jobId: string | null;
  teamId: string | null;
  preemptible: boolean;
}

export interface HoldGpu {
  id: string;
  model: string;
  /** Healthy, on a ready node: a GPU that could serve the holder. */
  usable: boolean;
  users: HoldGpuUser[];
}

export interface HoldNode {
  id: string;
  name: string;
  gpus: HoldGpu[];
}

export interface HeldWindow {
  reservationId: string;
  name: string;
  teamId: string;
  gpuModel: string;
  heldGpus: number;
  /** Whole nodes (`nodes` reservations): every GPU of a node, or none of it. */
  wholeNodes: boolean;
  start: number;
  end: number;
}

export interface Hold extends HeldWindow {
  /** The window is open now (otherwise it starts within the look-ahead). */
  active: boolean;
  gpuIds: Set<string>;
  /** GPUs of the hold other teams use now: preemptible ones (evicted at the start) and the rest. */
  othersPreemptible: string[];
  othersFixed: string[];
  /** Other teams' preemptible jobs on the held GPUs (checkpointed and requeued once the window opens). */
  victims: string[];
}

/** Cost of handing a GPU to `teamId`: 0 free or already its team's, 1 preemptible others, 1000 others that stay. */
function cost(g: HoldGpu, teamId: string): number {
  if (!g.usable) return 1_000_000;
  let c = 0;
  for (const u of g.users) {
    if (u.teamId === teamId) continue;
    c += u.jobId && u.preemptible ? 1 : 1000;
  }
  return c;
}

/**
 * The holds of the windows, open ones first, then by start and id. A window takes GPUs no
 * earlier window took; it holds what the model has if the model has fewer (the capacity check at
 * creation makes that a cluster that lost nodes since).
 */
export function chooseHolds(nodes: HoldNode[], windows: HeldWindow[], now: number): Hold[] {
  const taken = new Set<string>();
  const ordered = [...windows].sort(
    (a, b) => Number(b.start <= now) - Number(a.start <= now) || a.start - b.start || (a.reservationId < b.reservationId ? -1 : 1),
  );
  const holds: Hold[] = [];
  for (const w of ordered) {
    const candidates = nodes
      .map((n) => {
        const gpus = n.gpus.filter((g) => g.model === w.gpuModel && !taken.has(g.id));
        const costs = gpus.map((g) => ({ g, c: cost(g, w.teamId) })).sort((a, b) => a.c - b.c || (a.g.id < b.g.id ? -1 : 1));
        return { n, costs, whole: gpus.length === n.gpus.filter((g) => g.model === w.gpuModel).length };
      })
      .filter((x) => x.costs.length > 0 && (!w.wholeNodes || x.whole));
    // Whole nodes: the cheapest nodes (total cost), then by name. GPUs: the cheapest GPUs, on the
    // nodes with the most cheap GPUs first (packed), then by name.
    const total = (x: (typeof candidates)[number]) => x.costs.reduce((s, y) => s + y.c, 0);
    const picked: HoldGpu[] = [];
    if (w.wholeNodes) {
      candidates.sort((a, b) => total(a) - total(b) || (a.n.name < b.n.name ? -1 : 1));
      let left = w.heldGpus;
      for (const x of candidates) {
        if (x.costs.length > left) continue;
        picked.push(...x.costs.map((y) => y.g));
        left -= x.costs.length;
      }
    } else {
      const cheapOn = new Map(candidates.map((x) => [x.n.id, x.costs.filter((y) => y.c === 0).length]));
      const all = candidates.flatMap((x) => x.costs.map((y) => ({ ...y, n: x.n })));
      all.sort(
        (a, b) =>
          a.c - b.c || cheapOn.get(b.n.id)! - cheapOn.get(a.n.id)! || (a.n.name < b.n.name ? -1 : a.n.name > b.n.name ? 1 : 0) || (a.g.id < b.g.id ? -1 : 1),
      );
      picked.push(...all.slice(0, w.heldGpus).map((y) => y.g));
    }
    const gpuIds = new Set<string>();
    const othersPreemptible: string[] = [];
    const othersFixed: string[] = [];
    const victims = new Set<string>();
    for (const g of picked) {
      gpuIds.add(g.id);
      taken.add(g.id);
      const others = g.users.filter((u) => u.teamId !== w.teamId);
      if (others.some((u) => !u.jobId || !u.preemptible)) othersFixed.push(g.id);
      else if (others.length) othersPreemptible.push(g.id);
      for (const u of others) if (u.jobId && u.preemptible) victims.add(u.jobId);
    }
    holds.push({ ...w, active: w.start <= now && now < w.end, gpuIds, othersPreemptible, othersFixed, victims: [...victims] });
  }
  return holds;
}
