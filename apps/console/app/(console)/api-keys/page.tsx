'use client';

import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { SCOPES, type ApiKey, type ApiKeyCreated, type Role, type Scope } from '@gantry/contracts';
import { PageHeader } from '@/components/page-header';
import { Empty, ErrorPanel, Loading } from '@/components/states';
import { describeError } from '@/lib/api';
import { adminKeys, apiKeysQuery } from '@/lib/queries/admin';
import { meQuery } from '@/lib/queries/me';
import { useClient } from '@/lib/session';
import { useTeam } from '@/lib/team';

const RANK: Record<Role, number> = { viewer: 0, member: 1, 'team-admin': 2, 'tenant-admin': 3, 'platform-admin': 4 };
const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '–');

/** API keys: create (the secret is shown once), list (prefix, scopes, last use, expiry), revoke. */
export default function ApiKeysPage() {
  const client = useClient();
  const qc = useQueryClient();
  const me = useQuery(meQuery(client));
  const keys = useQuery(apiKeysQuery(client));
  const [created, setCreated] = useState<(ApiKeyCreated & { name: string }) | null>(null);
  const [confirm, setConfirm] = useState<string | null>(null);
  const revoke = useMutation({
    mutationFn: (id: string) => client.apiKeys.revoke(id),
    onSuccess: () => {
      setConfirm(null);
      void qc.invalidateQueries({ queryKey: adminKeys.apiKeys });
    },
  });
  const rows = [...(keys.data ?? [])].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  return (
    <>
      <PageHeader
        title="API keys"
        subtitle="Only a hash of each key is stored: the secret is shown once, when the key is made. A revoked key is refused at once."
      />
      {me.data && me.data.role !== 'viewer' && (
        <CreateKey
          onCreated={(k) => {
            setCreated(k);
            void qc.invalidateQueries({ queryKey: adminKeys.apiKeys });
          }}
        />
      )}
      {created && (
        <div className="alert alert-ok key-secret" data-testid="api-key-created">
          <div>
            <strong>Key “{created.name}” created.</strong> Copy it now: it will not be shown again.
          </div>
          <code className="mono secret" data-testid="api-key-secret">
            {created.key}
          </code>
          <button type="button" className="btn btn-sm" onClick={() => void navigator.clipboard?.writeText(created.key)}>
            Copy
          </button>
          <button type="button" className="btn btn-sm" data-testid="api-key-secret-dismiss" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      )}
      {revoke.isError && (
        <div className="alert alert-error" data-testid="api-key-revoke-error">
          {describeError(revoke.error)}
        </div>
      )}
      {keys.isError ? (
        <ErrorPanel error={keys.error} onRetry={() => void keys.refetch()} title="Cannot load the API keys" />
      ) : !keys.data ? (
        <Loading />
      ) : rows.length === 0 ? (
        <Empty>No API keys yet.</Empty>
      ) : (
        <div className="card table-card">
          <table className="table" data-testid="api-keys-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Prefix</th>
                <th>Role · bound to</th>
                <th>Scopes</th>
                <th>Last used</th>
                <th>Expires</th>
                <th>State</th>
                <th className="actions-col" aria-label="Actions" />
              </tr>
            </thead>
            <tbody>
              {rows.map((k) => (
                <KeyRow
                  key={k.id}
                  k={k}
                  confirming={confirm === k.id}
                  onAsk={() => setConfirm(k.id)}
                  onCancel={() => setConfirm(null)}
                  onRevoke={() => revoke.mutate(k.id)}
                  busy={revoke.isPending}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

function KeyRow({
  k,
  confirming,
  onAsk,
  onCancel,
  onRevoke,
  busy,
}: {
  k: ApiKey;
  confirming: boolean;
  onAsk: () => void;
  onCancel: () => void;
  onRevoke: () => void;
  busy: boolean;
}) {
  const { teamName } = useTeam();
  const expired = !!k.expiresAt && new Date(k.expiresAt) <= new Date();
  const state = k.revokedAt ? 'revoked' : expired ? 'expired' : 'active';
  return (
    <tr data-testid="api-key-row" data-key-name={k.name} data-key-prefix={k.prefix} data-state={state}>
      <td className="strong">{k.name}</td>
      <td className="mono" data-testid="api-key-prefix">
        gk_{k.prefix}_…
      </td>
      <td>
        {k.role}
        <div className="muted small">{k.teamId ? `team ${teamName(k.teamId)}` : k.tenantId ? 'whole tenant' : 'platform'}</div>
      </td>
      <td className="scopes" data-testid="api-key-scopes">
        {k.scopes.map((s) => (
          <span key={s} className="tag">
            {s}
          </span>
        ))}
      </td>
      <td className="nowrap">{when(k.lastUsedAt)}</td>
      <td className="nowrap">{when(k.expiresAt)}</td>
      <td>
        <span className={`pill ${state === 'active' ? 'pill-ok' : 'pill-bad'}`} data-testid="api-key-state">
          {state}
        </span>
      </td>
      <td className="actions-col nowrap">
        {state !== 'revoked' &&
          (confirming ? (
            <>
              <button type="button" className="btn btn-sm btn-danger-outline" data-testid="api-key-revoke-confirm" onClick={onRevoke} disabled={busy}>
                Revoke now
              </button>{' '}
              <button type="button" className="btn btn-sm" onClick={onCancel}>
                Keep
              </button>
            </>
          ) : (
            <button type="button" className="btn btn-sm" data-testid="api-key-revoke" onClick={onAsk}>
              Revoke
            </button>
          ))}
      </td>
    </tr>
  );
}

function CreateKey({ onCreated }: { onCreated: (k: ApiKeyCreated & { name: string }) => void }) {
  const client = useClient();
  const me = useQuery(meQuery(client));
  const { teams, teamId } = useTeam();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['jobs:read']);
  const [role, setRole] = useState<Role>('member');
  const [team, setTeam] = useState<string>(teamId);
  const [days, setDays] = useState('90');
  const create = useMutation({
    mutationFn: () =>
      client.apiKeys.create({
        name: name.trim(),
        scopes,
        role: role as Exclude<Role, 'platform-admin'>,
        ...(role !== 'tenant-admin' && team ? { teamId: team } : {}),
        ...(days.trim() ? { expiresAt: new Date(Date.now() + Number(days) * 86_400_000).toISOString() } : {}),
      }),
    onSuccess: (k) => {
      onCreated({ ...k, name: name.trim() });
      setName('');
    },
  });
  if (!me.data) return null;
  const held = SCOPES.filter((s) => me.data.role === 'platform-admin' || me.data.scopes.includes(s));
  const roles = (['viewer', 'member', 'team-admin', 'tenant-admin'] as Role[]).filter((r) => RANK[r] <= RANK[me.data.role]);
  return (
    <form
      className="card create-key"
      data-testid="api-key-form"
      onSubmit={(e) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <div className="card-head">
        <div className="card-title">New API key</div>
      </div>
      <div className="create-key-grid">
        <label className="field">
          <span className="field-label">Name</span>
          <input data-testid="api-key-name" value={name} onChange={(e) => setName(e.target.value)} placeholder="ci-pipeline" required />
        </label>
        <label className="field">
          <span className="field-label">Role</span>
          <select data-testid="api-key-role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
            {roles.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span className="field-label">Team</span>
          <select data-testid="api-key-team" value={team} onChange={(e) => setTeam(e.target.value)} disabled={role === 'tenant-admin'}>
            {!me.data.teamId && <option value="">whole tenant</option>}
            {teams.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span className="field-label">Expires in (days, empty = never)</span>
          <input data-testid="api-key-expiry" type="number" min="1" value={days} onChange={(e) => setDays(e.target.value)} />
        </label>
      </div>
      <fieldset className="scope-picker" data-testid="api-key-scopes-picker">
        <legend className="field-label">Scopes</legend>
        {held.map((s) => (
          <label key={s} className="scope-option">
            <input
              type="checkbox"
              data-testid={`api-key-scope-${s}`}
              checked={scopes.includes(s)}
              onChange={(e) => setScopes(e.target.checked ? [...scopes, s] : scopes.filter((x) => x !== s))}
            />
            <span className="mono">{s}</span>
          </label>
        ))}
      </fieldset>
      {create.isError && (
        <div className="alert alert-error" role="alert" data-testid="api-key-error">
          {describeError(create.error)}
        </div>
      )}
      <div className="quota-actions">
        <span className="spacer" />
        <button type="submit" className="btn btn-primary" data-testid="api-key-create" disabled={create.isPending || !name.trim() || scopes.length === 0}>
          {create.isPending ? 'Creating…' : 'Create key'}
        </button>
      </div>
    </form>
  );
}
