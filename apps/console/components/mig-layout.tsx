import { MIG_COMPUTE_SLICES, MIG_MEMORY_SLOTS, migProfile, type Gpu } from '@gantry/contracts';
import { migCompute } from '@/lib/gpu';

type Slice = { profile: string; start: number; size?: number; jobId?: string };

/** Memory slots of a slice: its size when the API gave one, else from the GPU catalog's geometry. */
function sizeOf(model: string, s: Slice): number {
  return s.size || (migProfile(model, s.profile)?.size ?? 1);
}

/** Compute slots of a GPU instance: as many as its compute slices, aligned with its memory start. */
const computeStart = (s: Slice) => Math.min(s.start, MIG_COMPUTE_SLICES - migCompute(s.profile));

/**
 * A GPU's MIG layout drawn as NVIDIA describes it: 7 compute (SM) slots above 8 memory slots;
 * each GPU instance covers its compute slices and its memory range. Slices in use are filled.
 */
export function MigLayout({ gpu, target }: { gpu: Gpu; target?: boolean }) {
  const layout: Slice[] = target ? (gpu.migTarget ?? []) : [...(gpu.mig?.layout ?? [])].sort((a, b) => a.start - b.start);
  const compute = layout.reduce((n, s) => n + migCompute(s.profile), 0);
  const used = layout.filter((s) => s.jobId).reduce((n, s) => n + migCompute(s.profile), 0);
  return (
    <div className={`mig${target ? ' mig-target' : ''}`} data-testid={target ? 'mig-target' : undefined}>
      <div
        className="mig-grid mig-grid-2"
        data-testid={target ? undefined : 'mig-layout'}
        title={`MIG: ${MIG_COMPUTE_SLICES} compute slots (top), ${MIG_MEMORY_SLOTS} memory slots (bottom)`}
      >
        <span className="mig-axis" style={{ gridRow: 1 }}>
          SM
        </span>
        <span className="mig-axis" style={{ gridRow: 2 }}>
          mem
        </span>
        {Array.from({ length: MIG_COMPUTE_SLICES }, (_, i) => (
          <span key={`c${i}`} className="mig-slot mig-slot-compute" style={{ gridColumn: `${i + 2} / span 1`, gridRow: 1 }} data-testid="mig-compute-slot" />
        ))}
        {Array.from({ length: MIG_MEMORY_SLOTS }, (_, i) => (
          <span key={`m${i}`} className="mig-slot" style={{ gridColumn: `${i + 2} / span 1`, gridRow: 2 }} data-testid="mig-memory-slot" />
        ))}
        {layout.map((s) => {
          const c = migCompute(s.profile);
          const title = `${s.profile} at memory slot ${s.start}${s.jobId ? ` · job ${s.jobId}` : target ? ' · being applied' : ' · free'}`;
          return [
            <span
              key={`c-${s.start}-${s.profile}`}
              className={`mig-slice mig-compute${s.jobId ? ' mig-used' : ''}`}
              style={{ gridColumn: `${computeStart(s) + 2} / span ${Math.max(1, c)}`, gridRow: 1 }}
              title={title}
            >
              {c}g
            </span>,
            <span
              key={`m-${s.start}-${s.profile}`}
              className={`mig-slice${s.jobId ? ' mig-used' : ''}`}
              style={{ gridColumn: `${s.start + 2} / span ${Math.max(1, sizeOf(gpu.model, s))}`, gridRow: 2 }}
              data-testid={target ? 'mig-target-slice' : 'mig-slice'}
              data-profile={s.profile}
              data-start={s.start}
              title={title}
            >
              {sizeOf(gpu.model, s) >= 2 ? s.profile : s.profile.split('.')[0]}
            </span>,
          ];
        })}
      </div>
      {!target && (
        <span className="mono small muted">
          {used}/{MIG_COMPUTE_SLICES} compute in use{compute < MIG_COMPUTE_SLICES ? ` · ${MIG_COMPUTE_SLICES - compute} not partitioned` : ''}
        </span>
      )}
    </div>
  );
}
