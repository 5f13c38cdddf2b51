import { Injectable } from '@nestjs/common';
import type { JobCreateParsed } from '@gantry/contracts';
import { validateRequest, type InventorySummary } from '@gantry/scheduler';
import { DomainError } from '../../common/errors';
import { ClusterRepository } from '../cluster/cluster.repository';

/** Which request field each engine validation code is about. */
const FIELD_OF: Record<string, string> = {
  ambiguous_request: 'resources',
  impossible_topology: 'topology',
  invalid_cpu: 'resources.cpuMilli',
  invalid_memory: 'resources.memoryMiB',
  invalid_fraction: 'resources.gpuFraction',
  invalid_gpus: 'resources.gpus',
  too_many_gpus: 'resources.gpus',
  invalid_replicas: 'replicas',
  invalid_topology: 'topology.level',
  unknown_gpu_model: 'resources.gpuModel',
  unknown_mig_profile: 'resources.migProfile',
  mig_profile_not_on_model: 'resources.migProfile',
};

const SUMMARY_TTL_MS = 15_000;
/** A refusal is confirmed on a summary at most this old (refusals read it at most once per this). */
const FRESH_MS = 1_000;

/**
 * Rejects at submission what no state of this cluster could ever run (an unknown GPU model,
 * a MIG profile no allowed model has, more GPUs per replica than any node has...), so that
 * such a job is a 400 and not an eternal pending one.
 */
@Injectable()
export class JobRequestValidator {
  private cached?: { at: number; summary: Promise<InventorySummary> };

  constructor(private readonly cluster: ClusterRepository) {}

  async validate(job: JobCreateParsed): Promise<void> {
    let result = this.check(job, await this.summary(SUMMARY_TTL_MS));
    // refused on a summary read a while ago: read it again (nodes registered since, e.g. at boot) before saying no
    if (!result.ok) result = this.check(job, await this.summary(FRESH_MS));
    if (!result.ok) {
      const field = FIELD_OF[result.code] ?? 'resources';
      throw new DomainError('validation_failed', `${field}: ${result.message}`, [{ field, problem: result.message }]);
    }
  }

  private check(job: JobCreateParsed, summary: InventorySummary) {
    const r = job.resources;
    return validateRequest(
      {
        replicas: job.replicas,
        request: {
          gpus: r.gpus,
          migProfile: r.migProfile,
          gpuMilli: r.gpuFraction !== undefined ? Math.round(r.gpuFraction * 1000) : undefined,
          gpuModels: r.gpuModel ? [r.gpuModel] : undefined,
          cpuMilli: r.cpuMilli,
          memoryMiB: r.memoryMiB,
        },
        topology: job.topology,
      },
      summary,
    );
  }

  /** The inventory summary, read at most once per `maxAgeMs`: submissions that arrive while it is read share the read. */
  private summary(maxAgeMs: number): Promise<InventorySummary> {
    const now = Date.now();
    if (this.cached && now - this.cached.at < maxAgeMs) return this.cached.summary;
    const summary = this.cluster.maxGpusPerNodeByModel().then((maxGpusPerNode) => ({ maxGpusPerNode }));
    this.cached = { at: now, summary };
    // a failed read is not kept: the next submission reads again
    summary.catch(() => {
      if (this.cached?.summary === summary) this.cached = undefined;
    });
    return summary;
  }
}
