import { Injectable, Logger } from '@nestjs/common';
import type { Schedule, ScheduleList } from '@gantry/contracts';
import type { z } from 'zod';
import type { ZScheduleCreate } from '@gantry/contracts';
import { DomainError, notFound } from '../../common/errors';
import { scopeOf, type Principal } from '../../common/principal';
import { type TenantScope } from '../../common/tenant-scope';
import { TenantsRepository } from '../tenants/tenants.repository';
import { JobsRepository } from '../jobs/jobs.repository';
import { JobsService } from '../jobs/jobs.service';
import { SchedulesRepository } from './schedules.repository';
import { cronProblem, dueFireTime, timeZoneProblem } from './schedule-due';

type Row = Awaited<ReturnType<SchedulesRepository['all']>>[number];

export interface ScheduleTickReport {
  fired: { scheduleId: string; action: string; fire: string; jobIds: string[] }[];
}

/** Suspend and resume windows per team or per job: a cron in a time zone, run by the worker's tick. */
@Injectable()
export class SchedulesService {
  private readonly logger = new Logger('schedules');

  constructor(
    private readonly schedules: SchedulesRepository,
    private readonly teams: TenantsRepository,
    private readonly jobRows: JobsRepository,
    private readonly jobs: JobsService,
  ) {}

  async create(p: Principal, teamId: string, body: z.output<typeof ZScheduleCreate>): Promise<Schedule> {
    const scope = scopeOf(p);
    if (scope.kind !== 'tenant') throw new DomainError('forbidden', 'schedules are made with a tenant or team key');
    if (!(await this.teams.findTeam(scope, teamId))) throw notFound('team', teamId);
    const problems = [
      { field: 'cron', problem: cronProblem(body.cron) },
      { field: 'timeZone', problem: timeZoneProblem(body.timeZone) },
    ].filter((x): x is { field: string; problem: string } => x.problem !== null);
    if (problems.length) throw new DomainError('validation_failed', `invalid ${problems.map((x) => x.field).join(', ')}`, problems);
    if (body.jobId) {
      const job = await this.jobRows.find(scope, body.jobId);
      if (!job || job.teamId !== teamId) throw notFound('job', body.jobId);
    }
    const row = await this.schedules.create(scope, { teamId, jobId: body.jobId ?? null, action: body.action, cron: body.cron.trim(), timeZone: body.timeZone });
    return present(row);
  }

  async list(p: Principal, teamId: string): Promise<ScheduleList> {
    const scope = scopeOf(p);
    if (!(await this.teams.findTeam(scope, teamId))) throw notFound('team', teamId);
    return { items: (await this.schedules.listOfTeam(scope, teamId)).map(present) };
  }

  async remove(p: Principal, id: string): Promise<void> {
    if (!(await this.schedules.remove(scopeOf(p), id))) throw notFound('schedule', id);
  }

  /** The worker's tick: runs each schedule whose previous fire (in its zone) it has not run yet, once. */
  async tick(now = new Date()): Promise<ScheduleTickReport> {
    const fired: ScheduleTickReport['fired'] = [];
    for (const s of await this.schedules.all()) {
      let fire: Date | null;
      try {
        fire = dueFireTime(s, now);
      } catch (e) {
        this.logger.warn(`schedule ${s.id}: ${(e as Error).message}`);
        continue;
      }
      if (!fire || !(await this.schedules.claim(s.id, s.lastRunAt, fire))) continue;
      const jobIds = await this.run(s);
      this.logger.log(
        `schedule ${s.id} (${s.action} ${s.jobId ?? `team ${s.teamId}`}, ${s.cron} ${s.timeZone}) fired for ${fire.toISOString()}: ${jobIds.length} job(s)`,
      );
      fired.push({ scheduleId: s.id, action: s.action, fire: fire.toISOString(), jobIds });
    }
    return { fired };
  }

  private async run(s: Row): Promise<string[]> {
    const scope: TenantScope = { kind: 'tenant', tenantId: s.tenantId, teamId: s.teamId };
    if (s.jobId) {
      const changed = s.action === 'suspend' ? await this.jobs.suspendJobIn(scope, s.jobId) : await this.jobs.resumeJobIn(scope, s.jobId);
      return changed ? [s.jobId] : [];
    }
    return s.action === 'suspend' ? (await this.jobs.suspendTeamIn(scope, s.teamId)).jobIds : (await this.jobs.resumeTeamIn(scope, s.teamId)).jobIds;
  }
}

function present(r: Row): Schedule {
  return {
    id: r.id,
    teamId: r.teamId,
    jobId: r.jobId,
    action: r.action,
    cron: r.cron,
    timeZone: r.timeZone,
    lastRunAt: r.lastRunAt ? r.lastRunAt.toISOString() : null,
    createdAt: r.createdAt.toISOString(),
  };
}
