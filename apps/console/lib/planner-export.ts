import type { PlannerRun } from '@gantry/contracts';

/** The headline figures of each policy, one CSV row per policy (the JSON export has everything). */
const COLUMNS = [
  'policy',
  'powerManagement',
  'jobs',
  'placed',
  'unplaced',
  'gpuUtilisationPct',
  'gpuAllocationPct',
  'gpuMemoryUsePct',
  'energyKWh',
  'energyWithoutPowerManagementKWh',
  'waitP50Seconds',
  'waitP95Seconds',
  'waitMaxSeconds',
  'fragmentationPct',
  'smPerBusyGpuPct',
  'powerDowns',
  'powerUps',
] as const;

export function plannerCsv(run: PlannerRun): string {
  const rows = (run.result?.policies ?? []).map((p) => COLUMNS.map((c) => (p[c] === null ? '' : String(p[c]))).join(','));
  return `${[COLUMNS.join(','), ...rows].join('\n')}\n`;
}

export function plannerJson(run: PlannerRun): string {
  return `${JSON.stringify(run, null, 2)}\n`;
}

/** Relative change of a figure against kubernetes-default, in %; null when the baseline is 0. */
export function relativeChange(value: number, baseline: number): number | null {
  if (baseline === 0) return value === 0 ? 0 : null;
  return ((value - baseline) / baseline) * 100;
}

/** Saves text as a file through the browser (a download). */
export function download(text: string, name: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  URL.revokeObjectURL(url);
}
