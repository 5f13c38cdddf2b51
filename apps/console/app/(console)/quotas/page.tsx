'use client';

import { useEffect, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Me, QuotaEntry, Team, TeamQuotas, TeamUsage } from '@gantry/contracts';
import { PageHeader } from '@/components/page-header';
import { Empty, ErrorPanel, Loading } from '@/components/states';
import { QuotaBar } from '@/components/quota-bar';
import { describeError } from '@/lib/api';
import { adminKeys, quotasQuery, usageQuery } from '@/lib/queries/admin';
import { meQuery } from '@/lib/queries/me';
import { useClient } from '@/lib/session';
import { useTeam } from '@/lib/team';
import { flavourName, formatHours } from '@/lib/format';

const fmt = (n: number | null | undefined) => (n === null || n === undefined ? '–' : String(Math.round(n * 1000) / 1000));

/** Quota administration: guaranteed / limit per GPU flavour, usage against them, GPU-hours. */
export default function QuotasPage() {
  const client = useClient();
  const me = useQuery(meQuery(client));
  const { teamId, teams } = useTeam();
  const shown = teamId ? teams.filter((t) => t.id === teamId) : teams;
  const canEdit = !!me.data && me.data.scopes.includes('quotas:write') && ['platform-admin', 'tenant-admin', 'team-admin'].includes(me.data.role);
  const canRead = !!me.data && (me.data.role === 'platform-admin' || me.data.scopes.includes('quotas:read'));
  return (
    <>
      <PageHeader
        title="Quotas"
        subtitle={
          <>
            Guaranteed GPUs are the team&apos;s own; above them a team borrows idle GPUs of its tenant up to the limit, and borrowed work is preemptible.{' '}
            {canEdit ? '' : 'Read only for your role.'}
          </>
        }
      />
      {!me.data ? (
        <Loading />
      ) : !canRead ? (
        <Empty>This key or session lacks the quotas:read scope.</Empty>
      ) : shown.length === 0 ? (
        <Empty>No team to show.</Empty>
      ) : (
        shown.map((t) => <TeamQuotaCard key={t.id} team={t} me={me.data} canEdit={canEdit && (me.data.role !== 'team-admin' || me.data.teamId === t.id)} />)
      )}
    </>
  );
}

interface Row {
  gpuModel: string;
  guaranteed: string;
  limit: string;
  gpuHourBudget: string;
  budgetPolicy: 'block' | 'preemptible-only';
}

const toRows = (q: TeamQuotas): Row[] =>
  q.quotas.map((x) => ({
    gpuModel: x.gpuModel,
    guaranteed: String(x.guaranteed),
    limit: String(x.limit),
    gpuHourBudget: x.gpuHourBudget === null ? '' : String(x.gpuHourBudget),
    budgetPolicy: x.budgetPolicy,
  }));

function TeamQuotaCard({ team, me, canEdit }: { team: Team; me: Me; canEdit: boolean }) {
  const client = useClient();
  const qc = useQueryClient();
  const quotas = useQuery(quotasQuery(client, team.id));
  const usage = useQuery(usageQuery(client, team.id));
  const [rows, setRows] = useState<Row[] | null>(null);
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    if (quotas.data && rows === null) setRows(toRows(quotas.data));
  }, [quotas.data, rows]);

  const save = useMutation({
    mutationFn: (entries: QuotaEntry[]) => client.quotas.put(team.id, { quotas: entries }),
    onSuccess: (data) => {
      qc.setQueryData(adminKeys.quotas(team.id), data);
      setRows(toRows(data));
      setSaved(true);
      void qc.invalidateQueries({ queryKey: adminKeys.usage(team.id) });
    },
  });

  if (quotas.isError) return <ErrorPanel error={quotas.error} onRetry={() => void quotas.refetch()} title={`Cannot load the quotas of ${team.name}`} />;
  if (!quotas.data || !rows) return <Loading />;
  const dirty = JSON.stringify(rows) !== JSON.stringify(toRows(quotas.data));
  const set = (i: number, patch: Partial<Row>) => {
    setSaved(false);
    setRows(rows.map((r, k) => (k === i ? { ...r, ...patch } : r)));
  };
  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    save.mutate(
      rows.map((r) => ({
        gpuModel: r.gpuModel.trim(),
        guaranteed: Number(r.guaranteed),
        limit: Number(r.limit),
        gpuHourBudget: r.gpuHourBudget.trim() === '' ? null : Number(r.gpuHourBudget),
        budgetPolicy: r.budgetPolicy,
      })),
    );
  };
  const u: TeamUsage | undefined = usage.data;
  const usageOf = (model: string) => u?.flavours.find((f) => f.gpuModel === model);
  const isTenantAdmin = me.role === 'tenant-admin' || me.role === 'platform-admin';

  return (
    <form className="card quota-card" data-testid="quota-team" data-team-id={team.id} onSubmit={submit}>
      <div className="card-head">
        <div className="card-title">{team.name}</div>
        <div className="muted quota-meta">
          {u && (
            <span data-testid="gpu-hours">
              {formatHours(u.gpuHours)} GPU-hours this month
              {u.gpuHourBudget !== null
                ? ` of ${formatHours(u.gpuHourBudget)} (${u.budgetPolicy === 'block' ? 'then new work is blocked' : 'then only preemptible work'})`
                : ''}
              {u.budgetExhausted && <span className="pill pill-bad"> budget spent</span>}
            </span>
          )}
          {quotas.data.tenantGpuTotal !== null && <span> · tenant total {fmt(quotas.data.tenantGpuTotal)} GPUs</span>}
          <span> · fair-share weight {fmt(quotas.data.weight)}</span>
        </div>
      </div>
      {quotas.data.quotas.length === 0 && (
        <div className="alert alert-warn" role="status" data-testid="quota-none">
          No quota: capacity is granted, never open by default, so this team can run nothing until a tenant admin grants it a quota
          {quotas.data.tenantGpuTotal === 0 ? ' (and the tenant has no GPUs yet: the platform admin sets its total)' : ''}.
        </div>
      )}
      <table className="table">
        <thead>
          <tr>
            <th>GPU flavour</th>
            <th className="num">Guaranteed</th>
            <th className="num">Limit</th>
            <th className="num">GPU-h budget</th>
            <th>When spent</th>
            <th>In use (blue: guaranteed, amber: borrowed)</th>
            <th className="num">Pending</th>
            {canEdit && isTenantAdmin && <th className="actions-col" aria-label="Actions" />}
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => {
            const f = usageOf(r.gpuModel);
            return (
              <tr key={i} data-testid="quota-row" data-gpu-model={r.gpuModel}>
                <td>
                  {canEdit && isTenantAdmin && !quotas.data.quotas.some((q) => q.gpuModel === r.gpuModel) ? (
                    <input
                      className="input-sm"
                      data-testid="quota-model"
                      value={r.gpuModel}
                      onChange={(e) => set(i, { gpuModel: e.target.value })}
                      aria-label="GPU model or *"
                    />
                  ) : (
                    <span className={r.gpuModel === '*' ? undefined : 'mono'}>{flavourName(r.gpuModel)}</span>
                  )}
                </td>
                <td className="num">
                  <input
                    className="input-sm num-input"
                    data-testid="quota-guaranteed"
                    type="number"
                    step="0.001"
                    value={r.guaranteed}
                    disabled={!canEdit}
                    onChange={(e) => set(i, { guaranteed: e.target.value })}
                    aria-label={`guaranteed GPUs for ${flavourName(r.gpuModel)}`}
                  />
                </td>
                <td className="num">
                  <input
                    className="input-sm num-input"
                    data-testid="quota-limit"
                    type="number"
                    step="0.001"
                    value={r.limit}
                    disabled={!canEdit}
                    onChange={(e) => set(i, { limit: e.target.value })}
                    aria-label={`limit for ${flavourName(r.gpuModel)}`}
                  />
                </td>
                <td className="num">
                  <input
                    className="input-sm num-input"
                    data-testid="quota-budget"
                    type="number"
                    step="1"
                    placeholder="none"
                    value={r.gpuHourBudget}
                    disabled={!canEdit}
                    onChange={(e) => set(i, { gpuHourBudget: e.target.value })}
                    aria-label={`GPU-hour budget for ${flavourName(r.gpuModel)}`}
                  />
                </td>
                <td>
                  <select
                    className="select-sm"
                    data-testid="quota-policy"
                    value={r.budgetPolicy}
                    disabled={!canEdit}
                    aria-label={`When the budget for ${flavourName(r.gpuModel)} is spent`}
                    onChange={(e) => set(i, { budgetPolicy: e.target.value as Row['budgetPolicy'] })}
                  >
                    <option value="block">block new work</option>
                    <option value="preemptible-only">preemptible only</option>
                  </select>
                </td>
                <td className="usage-cell">
                  {f ? (
                    <>
                      <QuotaBar inUse={f.inUse} guaranteed={f.guaranteed} limit={f.limit} />
                      <span className="usage-figures">
                        <span data-testid="usage-in-use">{fmt(f.inUse)}</span> / {fmt(f.guaranteed)} guaranteed / {fmt(f.limit)} limit
                        {f.borrowed > 0 && (
                          <span className="borrowed" data-testid="usage-borrowed">
                            {' '}
                            · {fmt(f.borrowed)} borrowed
                          </span>
                        )}
                      </span>
                    </>
                  ) : (
                    <span className="muted">–</span>
                  )}
                </td>
                <td className="num">{fmt(f?.pending ?? 0)}</td>
                {canEdit && isTenantAdmin && (
                  <td className="actions-col">
                    <button type="button" className="btn btn-sm" data-testid="quota-remove" onClick={() => setRows(rows.filter((_, k) => k !== i))}>
                      Remove
                    </button>
                  </td>
                )}
              </tr>
            );
          })}
        </tbody>
      </table>
      {u && u.byModel.length > 0 && (
        <div className="quota-models muted">In use by model: {u.byModel.map((m) => `${m.gpuModel} ${fmt(m.inUse)}`).join(' · ')}</div>
      )}
      {canEdit && (
        <div className="quota-actions">
          {isTenantAdmin && (
            <button
              type="button"
              className="btn btn-sm"
              data-testid="quota-add"
              onClick={() =>
                setRows([
                  ...rows,
                  { gpuModel: rows.some((r) => r.gpuModel === '*') ? '' : '*', guaranteed: '0', limit: '0', gpuHourBudget: '', budgetPolicy: 'block' },
                ])
              }
            >
              + Add flavour
            </button>
          )}
          {!isTenantAdmin && <span className="muted">As team admin you can move these values up to what your tenant admin set.</span>}
          <span className="spacer" />
          {save.isError && (
            <div className="alert alert-error quota-error" role="alert" data-testid="quota-error">
              {describeError(save.error)}
            </div>
          )}
          {saved && !dirty && !save.isError && (
            <span className="pill pill-ok" data-testid="quota-saved">
              saved
            </span>
          )}
          <button
            type="button"
            className="btn"
            disabled={!dirty || save.isPending}
            onClick={() => {
              setRows(toRows(quotas.data));
              save.reset();
            }}
          >
            Reset
          </button>
          <button type="submit" className="btn btn-primary" data-testid="quota-save" disabled={!dirty || save.isPending}>
            {save.isPending ? 'Saving…' : 'Save quotas'}
          </button>
        </div>
      )}
    </form>
  );
}
