import type { Gpu } from '@gantry/contracts';
import { gpuStatus, gpuTitle, gpuUsedFraction, type GpuStatus } from '@/lib/gpu';

/** One GPU as a small square coloured free / partial / allocated / unhealthy. */
export function GpuCell({ gpu }: { gpu: Gpu }) {
  const status = gpuStatus(gpu);
  const used = gpuUsedFraction(gpu);
  return (
    <span
      className={`gpu-cell gpu-${status}${gpu.health === 'degraded' ? ' gpu-degraded' : ''}${gpu.mode !== 'whole' ? ` gpu-mode-${gpu.mode}` : ''}`}
      data-testid="gpu-cell"
      data-gpu-index={gpu.index}
      data-status={status}
      data-mode={gpu.mode}
      title={gpuTitle(gpu)}
    >
      {status === 'partial' && <span className="gpu-fill" style={{ height: `${Math.round(used * 100)}%` }} />}
    </span>
  );
}

const LEGEND: { status: GpuStatus; label: string }[] = [
  { status: 'free', label: 'free' },
  { status: 'partial', label: 'partly used (MIG / shared)' },
  { status: 'allocated', label: 'allocated' },
  { status: 'unhealthy', label: 'unhealthy' },
];

export function GpuLegend({ counts }: { counts?: Record<string, number> }) {
  return (
    <div className="legend" data-testid="gpu-legend">
      {LEGEND.map(({ status, label }) => (
        <span key={status} className="legend-item">
          <span className={`gpu-cell gpu-${status}`}>{status === 'partial' && <span className="gpu-fill" style={{ height: '50%' }} />}</span>
          {label}
          {counts && <span className="muted mono"> {counts[status] ?? 0}</span>}
        </span>
      ))}
      <span className="legend-item">
        <span className="gpu-cell gpu-free gpu-degraded" />
        degraded
      </span>
    </div>
  );
}
