import { DomainError } from '../../common/errors';

/** A quota row as the checks need it (numbers). */
export interface QuotaRow {
  gpuModel: string;
  guaranteed: number;
  limit: number;
}

const EPS = 1e-9;
const r3 = (n: number) => Math.round(n * 1000) / 1000;
const flavour = (gpuModel: string) => (gpuModel === '*' ? 'all GPU models' : gpuModel);

/**
 * The rows that govern work of `gpuModel`: its model's row and the team's `*` row (its total
 * over every model), model row first; work that names no model is governed by the `*` row only.
 * Capacity is deny-by-default: work that no row covers gets nothing (empty result).
 */
export function coveringRows<Q extends { gpuModel: string }>(rows: readonly Q[], gpuModel: string | undefined): Q[] {
  const covering = rows.filter((q) => q.gpuModel === '*' || (gpuModel !== undefined && q.gpuModel === gpuModel));
  return covering.sort((a, b) => (a.gpuModel === '*' ? 1 : 0) - (b.gpuModel === '*' ? 1 : 0));
}

/** Why no quota covers work of `gpuModel` (a team without quota gets nothing until an admin grants it). */
export function noQuotaMessage(rows: readonly { gpuModel: string }[], gpuModel: string | undefined): string {
  if (!rows.length) return 'the team has no GPU quota: it can run nothing until a tenant admin grants one (Quotas)';
  const models = rows.map((q) => q.gpuModel).join(', ');
  return gpuModel
    ? `the team has no quota for ${gpuModel} (nor a "*" quota for all models); its quotas cover ${models}`
    : `the job names no GPU model and the team has no "*" quota for all models; name one of ${models} in resources.gpuModel`;
}

/**
 * Submit-time check, for jobs and endpoints alike: refuses (409 quota_exceeded) what could
 * never run, saying why: work larger than the cluster's GPUs of its model or the tenant's total,
 * work no quota covers, work larger than any covering limit (its model's row and the `*` row
 * both), and non-preemptible work larger than a covering guaranteed quota (it may never borrow).
 * What merely has to wait (GPUs in use now) is admission's to decide. `fields` name the request
 * fields the error points at.
 */
export function checkFitsQuota(
  bounds: { rows: readonly QuotaRow[]; tenantTotal: number | null; clusterGpus: number },
  work: { gpuModel: string | undefined; units: number; mayBorrow: boolean; what: string },
  fields: { size: string; borrow?: string; model?: string },
): void {
  const { rows } = bounds;
  // Work larger than the cluster or than the tenant's total can never run, whatever frees up.
  if (work.units > bounds.clusterGpus + EPS) {
    throw new DomainError(
      'quota_exceeded',
      `${work.what} needs ${r3(work.units)} GPUs and can never fit: the cluster has ${bounds.clusterGpus} ${work.gpuModel ? `${work.gpuModel} GPUs` : 'GPUs'} in all`,
      [{ field: fields.size, problem: `needs ${r3(work.units)} GPUs > ${bounds.clusterGpus} in the cluster` }],
    );
  }
  if (bounds.tenantTotal !== null && work.units > bounds.tenantTotal + EPS) {
    throw new DomainError(
      'quota_exceeded',
      `${work.what} needs ${r3(work.units)} GPUs and can never fit: the tenant's GPU total is ${r3(bounds.tenantTotal)} (set by the platform admin)`,
      [{ field: fields.size, problem: `needs ${r3(work.units)} GPUs > tenant total ${r3(bounds.tenantTotal)}` }],
    );
  }
  const covering = coveringRows(rows, work.gpuModel);
  if (!covering.length) {
    throw new DomainError('quota_exceeded', noQuotaMessage(rows, work.gpuModel), [
      { field: fields.model ?? (work.gpuModel ? 'resources.gpuModel' : 'resources'), problem: 'no quota covers it' },
    ]);
  }
  for (const q of covering) {
    if (work.units > q.limit + EPS) {
      throw new DomainError(
        'quota_exceeded',
        `${work.what} needs ${r3(work.units)} GPUs and can never fit: the team quota limit for ${flavour(q.gpuModel)} is ${r3(q.limit)}`,
        [{ field: fields.size, problem: `needs ${r3(work.units)} GPUs > limit ${r3(q.limit)}` }],
      );
    }
  }
  if (work.mayBorrow) return;
  for (const q of covering) {
    if (work.units > q.guaranteed + EPS) {
      throw new DomainError(
        'quota_exceeded',
        `${work.what} needs ${r3(work.units)} GPUs but non-preemptible work must fit the team's guaranteed quota of ${r3(q.guaranteed)} GPUs for ${flavour(q.gpuModel)}; set "preemptible": true (below critical priority) to borrow up to the limit of ${r3(q.limit)}`,
        [{ field: fields.borrow ?? fields.size, problem: `needs ${r3(work.units)} GPUs > guaranteed ${r3(q.guaranteed)} without preemption` }],
      );
    }
  }
}
