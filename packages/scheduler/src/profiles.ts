/** The built-in scheduling profiles: which plugins run, with which weights and arguments. */
import { type Profile, Registry } from './framework';

const FILTERS = ['node-ready', 'persona', 'node-resources', 'gpu-model', 'gpu-capacity'];
const base = { preFilter: ['request'], filter: FILTERS, reserve: ['team-usage'], permit: ['gang'] };

export const PROFILES: Record<string, Profile> = {
  /**
   * Default: fragmentation gradient under the learned mix (all of it: rare small shares are the
   * ones that fill residues), CPU stranding, consolidation as a tie-breaker, NVLink locality.
   */
  gantry: {
    name: 'gantry',
    ...base,
    score: [
      // differences below 0.1 GPU of expected fragmentation are ties; each GPU left without the
      // CPU to feed it (at the mix's CPU per GPU) costs 0.2 (the cpu-strand score, folded in);
      // each GPU of pinned work a placement displaces costs 1 (model pressure, re-read from the
      // free capacity every 64 placements, republished when a model's pressure moved by 0.05);
      // relieving the stranding of a node the mix's largest whole-GPU shape may take whole earns
      // the credit only for when that shape does not take it (whole hosts, re-read likewise), and
      // breaking a host at a CPU level the shape's CPU-heavy part finds scarcer than hosts overall
      // costs that scarcity per GPU of the host (host premium)...
      {
        name: 'fragmentation',
        weight: 1,
        args: {
          quantum: 0.1,
          strand: 0.2,
          pressure: 1,
          pressureEvery: 64,
          pressureMinChange: 0.05,
          wholeHost: true,
          wholeHostEvery: 64,
          wholeHostMinChange: 0.05,
          hostPremium: 1,
        },
      },
      // ...then the busier node and the tighter GPU (consolidation), then node order
      { name: 'packing', weight: 0.001 },
      { name: 'nvlink', weight: 1 },
    ],
    shareOrder: 'tightest',
    // the whole learned mix, looked at every x1.5 or 1,024 jobs and republished only when it moved by
    // 5% (total variation): each new version re-scores every node state
    mix: { coverage: 1, refreshStep: 1024, growth: 1.5, minChange: 0.05 },
  },
  /** Plain bin-packing (the published BestFit formula). */
  'best-fit': {
    name: 'best-fit',
    ...base,
    score: [
      { name: 'best-fit', weight: 1 },
      { name: 'nvlink', weight: 1 },
    ],
    shareOrder: 'tightest',
  },
  /** Spreading: least allocated first (e.g. for inference replicas). */
  spread: { name: 'spread', ...base, score: [{ name: 'spread', weight: 1 }], shareOrder: 'index' },
  /** FGD as published (integer score, ties by node order); pass args.shapes for the paper's fixed mix. */
  fgd: { name: 'fgd', ...base, score: [{ name: 'fgd', weight: 1 }], shareOrder: 'index' },
};

export function defaultProfileRegistry(): Registry<Profile> {
  const r = new Registry<Profile>('profile');
  for (const [name, p] of Object.entries(PROFILES)) r.register(name, p);
  return r;
}
