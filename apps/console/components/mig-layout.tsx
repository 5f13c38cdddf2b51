import { MIG_MEMORY_SLOTS, migProfile, partitionGeometry, type Gpu } from '@gantry/contracts';
import { computeSlicesOf, migCompute } from '@/lib/gpu';

type Slice = { profile: string; start: number; size?: number; jobId?: string };

/** Memory slots of a slice: its size when the API gave one, else from the GPU catalog's geometry. */
function sizeOf(model: string, s: Slice): number {
  return s.size || (migProfile(model, s.profile)?.size ?? 1);
}

/** What a slice shows: a MIG profile (its class when one slot is too narrow), an AMD partition's compute mode ('cpx'). */
function sliceLabel(model: string, s: Slice, xcd: boolean): string {
  if (xcd) return s.profile.split('_')[0]!;
  return sizeOf(model, s) >= 2 ? s.profile : s.profile.split('.')[0]!;
}

/** Compute slots of a GPU instance: as many as its compute slices, aligned with its memory start. */
const computeStart = (model: string, s: Slice) => Math.min(s.start, computeSlicesOf(model) - migCompute(s.profile, model));

/**
 * A GPU's partition layout drawn from its geometry: MIG as NVIDIA describes it (7 compute (SM)
 * slots above 8 memory slots), an MI300X as 8 XCDs above its 8 memory slots; each partition
 * covers its compute slices and its memory range. Partitions in use are filled.
 */
export function MigLayout({ gpu, target }: { gpu: Gpu; target?: boolean }) {
  const layout: Slice[] = target ? (gpu.migTarget ?? []) : [...(gpu.mig?.layout ?? [])].sort((a, b) => a.start - b.start);
  const geometry = partitionGeometry(gpu.model);
  const computeSlices = computeSlicesOf(gpu.model);
  const memorySlots = geometry?.memorySlots ?? MIG_MEMORY_SLOTS;
  const xcd = geometry?.computeUnit === 'xcd';
  const compute = layout.reduce((n, s) => n + migCompute(s.profile, gpu.model), 0);
  const used = layout.filter((s) => s.jobId).reduce((n, s) => n + migCompute(s.profile, gpu.model), 0);
  return (
    <div className={`mig${target ? ' mig-target' : ''}`} data-testid={target ? 'mig-target' : undefined}>
      <div
        className="mig-grid mig-grid-2"
        data-testid={target ? undefined : 'mig-layout'}
        title={`${xcd ? 'partitions' : 'MIG'}: ${computeSlices} compute slots${xcd ? ' (XCDs)' : ''} (top), ${memorySlots} memory slots (bottom)`}
      >
        <span className="mig-axis" style={{ gridRow: 1 }}>
          {xcd ? 'XCD' : 'SM'}
        </span>
        <span className="mig-axis" style={{ gridRow: 2 }}>
          mem
        </span>
        {Array.from({ length: computeSlices }, (_, i) => (
          <span key={`c${i}`} className="mig-slot mig-slot-compute" style={{ gridColumn: `${i + 2} / span 1`, gridRow: 1 }} data-testid="mig-compute-slot" />
        ))}
        {Array.from({ length: memorySlots }, (_, i) => (
          <span key={`m${i}`} className="mig-slot" style={{ gridColumn: `${i + 2} / span 1`, gridRow: 2 }} data-testid="mig-memory-slot" />
        ))}
        {layout.map((s) => {
          const c = migCompute(s.profile, gpu.model);
          const title = `${s.profile} at memory slot ${s.start}${s.jobId ? ` · job ${s.jobId}` : target ? ' · being applied' : ' · free'}`;
          return [
            <span
              key={`c-${s.start}-${s.profile}`}
              className={`mig-slice mig-compute${s.jobId ? ' mig-used' : ''}`}
              style={{ gridColumn: `${computeStart(gpu.model, s) + 2} / span ${Math.max(1, c)}`, gridRow: 1 }}
              title={title}
            >
              {xcd ? `${c}x` : `${c}g`}
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
              {sliceLabel(gpu.model, s, xcd)}
            </span>,
          ];
        })}
      </div>
      {!target && (
        <span className="mono small muted">
          {used}/{computeSlices} compute in use{compute < computeSlices ? ` · ${computeSlices - compute} not partitioned` : ''}
        </span>
      )}
    </div>
  );
}
