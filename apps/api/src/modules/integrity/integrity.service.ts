import { Injectable } from '@nestjs/common';
import type { IntegrityReport } from '@gantry/contracts';
import { IntegrityRepository } from './integrity.repository';
import { IntegrityStore, summarize } from './integrity.store';

/** The database's books, checked on demand: every invariant of the invariant checker. */
@Injectable()
export class IntegrityService {
  constructor(
    private readonly repo: IntegrityRepository,
    private readonly store: IntegrityStore,
  ) {}

  async check(settled: boolean): Promise<IntegrityReport> {
    const t0 = performance.now();
    const r = await this.repo.check(settled);
    const ms = Math.round(performance.now() - t0);
    // A strict check is also the latest word for /metrics; a settled one checks more rules, so it is not comparable.
    if (!settled) await this.store.save(summarize(r, ms));
    return { ok: r.ok, checkedAt: r.checkedAt, settled: r.settled, ms, counts: r.counts, violations: r.violations };
  }
}
