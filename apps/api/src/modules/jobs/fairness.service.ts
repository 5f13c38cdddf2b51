import { Injectable } from '@nestjs/common';
import type { Fairness } from '@gantry/contracts';
import { dominantShare } from '@gantry/scheduler';
import { scopeOf, type Principal } from '../../common/principal';
import { covers } from '../../common/tenant-scope';
import { FairShareService } from '../fair-share/fair-share.service';
import { withHistory } from '../fair-share/fair-usage';
import { JobsRepository } from './jobs.repository';

const QUEUE_HEAD = 10;
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
const gpus = (x: number) => (Math.round(x * 10) / 10).toString();

/**
 * `GET /v1/fairness`: per team of the caller's tenant, its entitlement (weight, quota), decayed
 * usage, what it holds and the share the scheduler orders by; the head of the queue and why its
 * first job goes next. The same inputs and functions as the cycle's order (FairShareService,
 * withHistory, the engine's dominantShare).
 */
@Injectable()
export class FairnessService {
  constructor(
    private readonly fairShare: FairShareService,
    private readonly jobs: JobsRepository,
  ) {}

  async view(p: Principal): Promise<Fairness> {
    const scope = scopeOf(p);
    const params = this.fairShare.params;
    const { teams, capacity } = await this.fairShare.teams(scope);
    const w = params.historyWeight;
    const history = Object.fromEntries(teams.map((t) => [t.id, t.decayedAverageGpus]));
    const [queue, waiting] = await Promise.all([
      this.jobs.queueHead(scope, QUEUE_HEAD, { gpus: history, weight: w }),
      this.jobs.pendingByTeamAndPriority(scope),
    ]);
    const usage = withHistory(Object.fromEntries(teams.map((t) => [t.id, t.held])), history, w);
    const total = { gpus: capacity.gpus || 1, cpuMilli: capacity.cpuMilli || 1, memoryMiB: capacity.memoryMiB || 1 };
    const shareOf = new Map(teams.map((t) => [t.id, dominantShare(usage[t.id], total, t.weight)]));
    const nameOf = new Map(teams.map((t) => [t.id, t.name]));
    const pendingOf = new Map<string, number>();
    for (const r of waiting) pendingOf.set(r.teamId, (pendingOf.get(r.teamId) ?? 0) + r.jobs);
    const head = queue.map((j, i) => {
      const visible = covers(scope, { tenantId: j.tenantId, teamId: j.teamId });
      return {
        position: i + 1,
        jobId: visible ? j.id : null,
        jobName: visible ? j.name : null,
        teamId: j.teamId,
        teamName: nameOf.get(j.teamId) ?? j.teamId,
        priority: j.priority,
      };
    });
    const first = queue[0];
    let why: string | null = null;
    if (first) {
      const rivals = [...new Set(waiting.filter((r) => r.priority === first.priority && r.teamId !== first.teamId).map((r) => r.teamId))];
      const higher = waiting.some((r) => r.priority !== first.priority);
      const t = teams.find((x) => x.id === first.teamId);
      const mine = t
        ? `${t.name}'s weighted share is ${pct(shareOf.get(t.id) ?? 0)} (${w < 1 ? `${gpus((1 - w) * t.held.gpus)} for the ${gpus(t.held.gpus)} GPUs it holds` : ''}${w > 0 && w < 1 ? ' + ' : ''}${w > 0 ? `${gpus(w * t.decayedAverageGpus)} for its decayed past usage` : ''}, of ${capacity.gpus} GPUs, weight ${t.weight})`
        : '';
      why = [
        `${higher ? `It has the highest priority waiting (${first.priority}). ` : ''}`,
        rivals.length
          ? `Among teams with ${first.priority} work, ${mine}, the lowest: ${rivals
              .map((r) => `${nameOf.get(r) ?? r} ${pct(shareOf.get(r) ?? 0)}`)
              .join(', ')}. `
          : `No other team has ${first.priority} work waiting; ${mine}. `,
        `It is the team's oldest ${first.priority} job.`,
      ].join('');
    }
    return {
      halfLifeSeconds: params.halfLifeSeconds,
      historyWeight: params.historyWeight,
      clusterGpus: capacity.gpus,
      teams: teams.map((t) => ({
        teamId: t.id,
        teamName: t.name,
        weight: t.weight,
        entitlement: t.quotas,
        gpusHeld: t.held.gpus,
        decayedGpuHours: t.decayedGpuHours,
        decayedAverageGpus: t.decayedAverageGpus,
        fairShareGpus: usage[t.id]?.gpus ?? 0,
        share: shareOf.get(t.id) ?? 0,
        pending: pendingOf.get(t.id) ?? 0,
      })),
      queue: head,
      why,
    };
  }
}
