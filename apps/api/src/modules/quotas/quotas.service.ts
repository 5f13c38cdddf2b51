import { Injectable } from '@nestjs/common';
import type { JobResources, QuotaEntry, QuotasPut, TeamQuotas, TeamUsage, TenantQuota } from '@gantry/contracts';
import { DomainError, notFound } from '../../common/errors';
import { scopeOf, type Principal } from '../../common/principal';
import { requireRole } from '../../common/roles';
import { replicaGpuUnits } from './job-units';
import { checkNewTenantTotal, checkQuotaShape, checkTeamAdminCeiling, checkTenantTotal } from './quota-rules';
import { QuotasRepository } from './quotas.repository';
import { budgetPeriod } from './budget-period';
import { ChangeEpoch } from '../../common/change-epoch.service';

const r3 = (n: number) => Math.round(n * 1000) / 1000;

@Injectable()
export class QuotasService {
  constructor(
    private readonly repo: QuotasRepository,
    private readonly epochs: ChangeEpoch,
  ) {}

  async get(p: Principal, teamId: string): Promise<TeamQuotas> {
    const team = await this.repo.findTeam(scopeOf(p), teamId);
    if (!team) throw notFound('team', teamId);
    return presentQuotas(team);
  }

  /**
   * Replaces a team's quotas. Tenant admins (and the platform admin) set them and their
   * ceilings; a team admin may change only its own team, within those ceilings.
   */
  async put(p: Principal, teamId: string, body: QuotasPut & { quotas: QuotaEntry[] }): Promise<TeamQuotas> {
    const team = await this.repo.findTeam(scopeOf(p), teamId);
    if (!team) throw notFound('team', teamId);
    requireRole(p, 'tenant-admin', 'team-admin');
    const asTeamAdmin = p.role === 'team-admin';
    if (asTeamAdmin && p.teamId !== team.id) throw new DomainError('forbidden', 'a team admin can change only the quotas of its own team');
    checkQuotaShape(body.quotas);
    const replaced = await this.repo.replaceTeamQuotas(scopeOf(p), team.id, body.quotas, { setCeilings: !asTeamAdmin }, (state) => {
      if (asTeamAdmin) checkTeamAdminCeiling(body.quotas, state.current);
      checkTenantTotal(state.gpuTotal, team.id, body.quotas, state.teams);
    });
    if (!replaced) throw notFound('team', teamId);
    // Submissions on every process check the new quotas from their next request on.
    await this.epochs.changed('teams');
    return this.get(p, teamId);
  }

  async getTenantQuota(p: Principal, tenantId: string): Promise<TenantQuota> {
    const t = await this.repo.findTenant(scopeOf(p), tenantId);
    if (!t) throw notFound('tenant', tenantId);
    return { tenantId: t.id, gpuTotal: t.gpuTotal == null ? null : Number(t.gpuTotal), guaranteedSum: r3(await this.repo.guaranteedSum(scopeOf(p), t.id)) };
  }

  /** The tenant total is the platform admin's: tenant admins read it, never raise it. */
  async putTenantQuota(p: Principal, tenantId: string, gpuTotal: number | null): Promise<TenantQuota> {
    const t = await this.repo.findTenant(scopeOf(p), tenantId);
    if (!t) throw notFound('tenant', tenantId);
    requireRole(p, 'platform-admin');
    const r = await this.repo.setTenantTotal(scopeOf(p), t.id, gpuTotal, (sum) => checkNewTenantTotal(gpuTotal, sum));
    if (!r) throw notFound('tenant', tenantId);
    await this.epochs.changed('teams');
    return { tenantId: t.id, gpuTotal: r.tenant.gpuTotal == null ? null : Number(r.tenant.gpuTotal), guaranteedSum: r3(r.guaranteedSum) };
  }

  async usage(p: Principal, teamId: string, now = new Date()): Promise<TeamUsage> {
    const scope = scopeOf(p);
    const team = await this.repo.findTeam(scope, teamId);
    if (!team) throw notFound('team', teamId);
    const period = budgetPeriod(now);
    const [byModel, pending, gpuHours] = await Promise.all([
      this.repo.inUseByModel(scope, team.id),
      this.repo.pendingJobs(scope, team.id),
      this.repo.gpuHours(scope, team.id, period.start, period.end, now),
    ]);
    const pendingByModel = new Map<string, number>();
    let pendingAll = 0;
    for (const j of pending) {
      const r = j.resources as JobResources;
      const units = replicaGpuUnits(r) * j.replicas;
      pendingAll += units;
      if (r.gpuModel) pendingByModel.set(r.gpuModel, (pendingByModel.get(r.gpuModel) ?? 0) + units);
    }
    const total = [...byModel.values()].reduce((s, n) => s + n, 0);
    const rows = team.quotas.map((q) => ({ gpuModel: q.gpuModel, guaranteed: Number(q.guaranteed), limit: Number(q.limit) }));
    if (!rows.some((q) => q.gpuModel === '*')) rows.push({ gpuModel: '*', guaranteed: NaN, limit: NaN });
    const flavours = rows.map((q) => {
      const inUse = q.gpuModel === '*' ? total : (byModel.get(q.gpuModel) ?? 0);
      const known = !Number.isNaN(q.guaranteed);
      return {
        gpuModel: q.gpuModel,
        inUse: r3(inUse),
        borrowed: known ? r3(Math.max(0, inUse - q.guaranteed)) : 0,
        guaranteed: known ? q.guaranteed : null,
        limit: known ? q.limit : null,
        pending: r3(q.gpuModel === '*' ? pendingAll : (pendingByModel.get(q.gpuModel) ?? 0)),
      };
    });
    const budgetRow = team.quotas.find((q) => q.gpuHourBudget != null && q.gpuModel === '*') ?? team.quotas.find((q) => q.gpuHourBudget != null);
    const budget = budgetRow?.gpuHourBudget == null ? null : Number(budgetRow.gpuHourBudget);
    return {
      teamId: team.id,
      period: { start: period.start.toISOString(), end: period.end.toISOString() },
      flavours,
      byModel: [...byModel].map(([gpuModel, inUse]) => ({ gpuModel, inUse: r3(inUse) })).sort((a, b) => a.gpuModel.localeCompare(b.gpuModel)),
      gpuHours: Math.round(gpuHours * 10_000) / 10_000,
      gpuHourBudget: budget,
      budgetPolicy: budgetRow ? (budgetRow.budgetPolicy as 'block' | 'preemptible-only') : null,
      budgetExhausted: budget !== null && gpuHours >= budget,
    };
  }
}

function presentQuotas(team: NonNullable<Awaited<ReturnType<QuotasRepository['findTeam']>>>): TeamQuotas {
  return {
    teamId: team.id,
    tenantId: team.tenantId,
    tenantGpuTotal: team.tenant.gpuTotal == null ? null : Number(team.tenant.gpuTotal),
    weight: Number(team.weight),
    quotas: team.quotas.map((q) => ({
      gpuModel: q.gpuModel,
      guaranteed: Number(q.guaranteed),
      limit: Number(q.limit),
      gpuHourBudget: q.gpuHourBudget == null ? null : Number(q.gpuHourBudget),
      budgetPolicy: q.budgetPolicy as 'block' | 'preemptible-only',
      updatedAt: q.updatedAt.toISOString(),
    })),
  };
}
