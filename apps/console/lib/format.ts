import { JOB_STATES, TERMINAL_JOB_STATES, migSliceFraction, type Job, type JobState, type Placement } from '@gantry/contracts';

export const TERMINAL_STATES: readonly JobState[] = TERMINAL_JOB_STATES;
export const isActive = (state: JobState) => !TERMINAL_STATES.includes(state);

/** Order in which job states are listed (lifecycle order). */
export const STATE_ORDER: readonly JobState[] = JOB_STATES;

function trimNumber(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Math.round(n * 1000) / 1000);
}

/**
 * What a job asks for, per the whole gang:
 * "2 x 8 x H100-80GB" (replicas x GPUs per replica x model), "8 x GPU" (any model),
 * "1g.10gb" / "4 x 1g.10gb" (MIG slices), "0.25 GPU" / "2 x 0.25 GPU" (fractional shares).
 */
export function formatGpuRequest(job: Pick<Job, 'replicas' | 'resources'>): string {
  const r = job.resources;
  const gang = job.replicas > 1 ? `${job.replicas} x ` : '';
  if (r.gpus !== undefined) return `${gang}${r.gpus} x ${r.gpuModel ?? 'GPU'}`;
  if (r.migProfile !== undefined) return `${gang}${r.migProfile}`;
  if (r.gpuFraction !== undefined) return `${gang}${trimNumber(r.gpuFraction)} GPU`;
  return '-';
}

/** The GPU model a MIG or fractional request is pinned to, shown beside the request. */
export function pinnedModel(job: Pick<Job, 'resources'>): string | undefined {
  return job.resources.gpus === undefined ? job.resources.gpuModel : undefined;
}

/** Total GPUs a request holds (MIG slices count compute slices / 7). */
export function gpuEquivalent(job: Pick<Job, 'replicas' | 'resources'>): number {
  const r = job.resources;
  let per = 0;
  if (r.gpus !== undefined) per = r.gpus;
  else if (r.migProfile !== undefined) per = migSliceFraction(r.migProfile) ?? 0;
  else if (r.gpuFraction !== undefined) per = r.gpuFraction;
  return per * job.replicas;
}

/** "node-a, node-b +3" */
export function placementSummary(placement: Placement[], max = 2): string {
  const names = [...new Set(placement.map((p) => p.nodeName || p.nodeId))];
  if (names.length === 0) return '';
  const shown = names.slice(0, max).join(', ');
  return names.length > max ? `${shown} +${names.length - max}` : shown;
}

/** What one replica holds on its node: "GPU 0-7", "GPU 3 · 1g.10gb @ slot 2", "GPU 1 · 0.25". */
export function placementGpus(p: Placement): string {
  if (p.gpus.length === 0) return '-';
  const mig = p.gpus.filter((g) => g.migProfile);
  const shared = p.gpus.filter((g) => g.fraction !== undefined && !g.migProfile);
  const parts: string[] = [];
  for (const g of mig) parts.push(`GPU ${g.index} · ${g.migProfile}${g.migStart !== undefined ? ` @ slot ${g.migStart}` : ''}`);
  for (const g of shared) parts.push(`GPU ${g.index} · ${trimNumber(g.fraction as number)} share`);
  const whole = p.gpus.filter((g) => !g.migProfile && g.fraction === undefined).map((g) => g.index);
  if (whole.length) parts.unshift(`GPU ${indexRanges(whole)}`);
  return parts.join(', ');
}

/** [0,1,2,3,6] -> "0-3, 6" */
export function indexRanges(indices: number[]): string {
  const sorted = [...new Set(indices)].sort((a, b) => a - b);
  const out: string[] = [];
  let start = sorted[0];
  let prev = sorted[0];
  for (let i = 1; i <= sorted.length; i++) {
    const cur = sorted[i];
    if (cur === prev + 1) {
      prev = cur;
      continue;
    }
    out.push(start === prev ? `${start}` : `${start}-${prev}`);
    start = cur;
    prev = cur;
  }
  return out.join(', ');
}

/** "12s", "5m", "3h 4m", "2d 3h" */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${m % 60}m`;
  const d = Math.floor(h / 24);
  return `${d}d ${h % 24}h`;
}

export function age(iso: string | null | undefined, now: number): string {
  if (!iso) return '-';
  const t = Date.parse(iso);
  return Number.isNaN(t) ? '-' : formatDuration(now - t);
}

/** Compact age for dense tables: "45s", "12m", "3h", "2d". */
export function shortAge(iso: string | null | undefined, now: number): string {
  if (!iso) return '-';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '-';
  const s = Math.max(0, Math.floor((now - t) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/*
 * Dates: every date and time of the console goes through these, so one page never says
 * "Dec 1, 06:16:06" and another "12/1/2026, 6:21:23 AM". 24-hour clock, the reader's time zone.
 */
const DATE_TIME = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
const DATE_MINUTE = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hour12: false });
const CLOCK = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', hour12: false });
const DATE_YEAR = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });

function toDate(at: string | number | Date | null | undefined): Date | null {
  if (at === null || at === undefined || at === '') return null;
  const d = at instanceof Date ? at : new Date(at);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** "Dec 1, 06:16:06": an event's moment. */
export function formatTime(at: string | number | Date | null | undefined): string {
  const d = toDate(at);
  return d ? DATE_TIME.format(d) : '-';
}

/** "Dec 1, 06:16": a chart bucket over days. */
export function formatMinute(at: string | number | Date | null | undefined): string {
  const d = toDate(at);
  return d ? DATE_MINUTE.format(d) : '-';
}

/** "06:16": a chart bucket within a day. */
export function formatClock(at: string | number | Date | null | undefined): string {
  const d = toDate(at);
  return d ? CLOCK.format(d) : '-';
}

/** "Mar 2, 2027": a day, with its year (expiry dates). */
export function formatDay(at: string | number | Date | null | undefined): string {
  const d = toDate(at);
  return d ? DATE_YEAR.format(d) : '-';
}

export function formatMiB(mib: number): string {
  if (mib >= 1024 * 1024) return `${trimNumber(Math.round((mib / 1024 / 1024) * 10) / 10)} TiB`;
  if (mib >= 1024) return `${trimNumber(Math.round((mib / 1024) * 10) / 10)} GiB`;
  return `${mib} MiB`;
}

/** GPU counts can be fractional (MIG slices, shares): one decimal at most. */
export function formatGpus(n: number): string {
  return trimNumber(Math.round(n * 10) / 10);
}

export function formatPercent(fraction: number): string {
  return `${Math.round(fraction * 100)}%`;
}

/**
 * Hours for people: "17 GPU-hours" rather than "16.965"; one decimal below 10, none above
 * (the exact figure stays in the API and the CSV export).
 */
export function formatHours(h: number): string {
  const abs = Math.abs(h);
  if (abs === 0) return '0';
  if (abs < 0.1) return h > 0 ? '< 0.1' : '> -0.1';
  if (abs < 10) return String(Math.round(h * 10) / 10);
  return Math.round(h).toLocaleString('en-US');
}

/** A GPU flavour of a quota: `*` means every model. */
export function flavourName(gpuModel: string): string {
  return gpuModel === '*' ? 'all GPU models' : gpuModel;
}
