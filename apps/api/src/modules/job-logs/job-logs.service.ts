import { Injectable } from '@nestjs/common';
import type { JobLogs } from '@gantry/contracts';
import { notFound } from '../../common/errors';
import { scopeOf, type Principal } from '../../common/principal';
import { JobsRepository } from '../jobs/jobs.repository';
import { JobLogsRepository } from './job-logs.repository';

export const DEFAULT_LOG_TAIL = 500;

/** A job's log as its owners read it: another tenant's or team's job is 404, like the job itself. */
@Injectable()
export class JobLogsService {
  constructor(
    private readonly jobs: JobsRepository,
    private readonly logs: JobLogsRepository,
  ) {}

  async read(p: Principal, jobId: string, q: { tail?: number; since?: string }): Promise<JobLogs> {
    const scope = scopeOf(p);
    const job = await this.jobs.find(scope, jobId);
    if (!job) throw notFound('job', jobId);
    const { lines, truncated } = await this.logs.read(scope, jobId, { tail: q.tail ?? DEFAULT_LOG_TAIL, since: q.since ? new Date(q.since) : undefined });
    return {
      jobId,
      state: job.state,
      truncated,
      lines: lines.map((l) => ({
        at: l.at.toISOString(),
        replica: l.replica,
        seq: l.seq.toString(),
        stream: l.stream as JobLogs['lines'][number]['stream'],
        text: l.text,
      })),
    };
  }
}
