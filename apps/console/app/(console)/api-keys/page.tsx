'use client';

import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ROLE_RANK, ROLE_SCOPES, SCOPES, type ApiKey, type ApiKeyCreated, type Role, type Scope } from '@gantry/contracts';
import { ConfirmDialog } from '@/components/modal';
import { formatDay, formatTime } from '@/lib/format';
import { PageHeader } from '@/components/page-header';
import { Empty, ErrorPanel, Loading } from '@/components/states';
import { describeError } from '@/lib/api';
import { adminKeys, apiKeysQuery } from '@/lib/queries/admin';
import { meQuery } from '@/lib/queries/me';
import { useClient } from '@/lib/session';
import { useTeam } from '@/lib/team';

const when = (iso: string | null) => (iso ? formatTime(iso) : 'never');

/** What each scope lets a key do, in words. */
const SCOPE_WORDS: Record<Scope, string> = {
  'jobs:read': 'see jobs',
  'jobs:write': 'submit, suspend and cancel jobs',
  'endpoints:read': 'see endpoints',
  'endpoints:write': 'create, scale and call endpoints',
  'quotas:read': 'see quotas and usage',
  'quotas:write': 'change quotas',
  'cluster:read': 'see nodes and GPUs',
  'cluster:admin': 'cordon, drain and reconfigure nodes',
  'tenants:admin': 'manage tenants',
};

const ROLE_WORDS: Record<Role, string> = {
  viewer: 'viewer',
  member: 'member',
  'team-admin': 'team admin',
  'tenant-admin': 'tenant admin',
  'platform-admin': 'platform admin',
};

/** The scopes a new key of this role starts with: the role's, as far as the caller holds them. */
function defaultScopes(role: Role, held: readonly Scope[]): Scope[] {
  return ROLE_SCOPES[role].filter((s) => held.includes(s));
}

/** API keys: create (the secret is shown once), list (prefix, scopes, last use, expiry), revoke. */
export default function ApiKeysPage() {
  const client = useClient();
  const qc = useQueryClient();
  const me = useQuery(meQuery(client));
  const keys = useQuery(apiKeysQuery(client));
  const [created, setCreated] = useState<(ApiKeyCreated & { name: string }) | null>(null);
  const [confirm, setConfirm] = useState<ApiKey | null>(null);
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
      {confirm && (
        <ConfirmDialog
          title={`Revoke the key “${confirm.name}”?`}
          confirmLabel={revoke.isPending ? 'Revoking…' : 'Revoke now'}
          tone="danger"
          busy={revoke.isPending}
          error={revoke.isError ? describeError(revoke.error) : null}
          onCancel={() => {
            setConfirm(null);
            revoke.reset();
          }}
          onConfirm={() => revoke.mutate(confirm.id)}
        >
          Anything that uses <span className="mono">gk_{confirm.prefix}_…</span> is refused from the next request on. This cannot be undone.
        </ConfirmDialog>
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
                <KeyRow key={k.id} k={k} onAsk={() => setConfirm(k)} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

function KeyRow({ k, onAsk }: { k: ApiKey; onAsk: () => void }) {
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
        {ROLE_WORDS[k.role]}
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
      <td className="nowrap">{k.expiresAt ? formatDay(k.expiresAt) : 'never'}</td>
      <td>
        <span className={`pill ${state === 'active' ? 'pill-ok' : 'pill-bad'}`} data-testid="api-key-state">
          {state}
        </span>
      </td>
      <td className="actions-col nowrap">
        {state !== 'revoked' && k.canRevoke && (
          <button type="button" className="btn btn-sm" data-testid="api-key-revoke" onClick={onAsk} aria-label={`Revoke ${k.name}`}>
            Revoke
          </button>
        )}
      </td>
    </tr>
  );
}

function CreateKey({ onCreated }: { onCreated: (k: ApiKeyCreated & { name: string }) => void }) {
  const client = useClient();
  const me = useQuery(meQuery(client));
  const { teams, teamId } = useTeam();
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [scopes, setScopes] = useState<Scope[] | null>(null);
  const [team, setTeam] = useState<string>(teamId);
  const [days, setDays] = useState('90');
  const create = useMutation({
    mutationFn: () =>
      client.apiKeys.create({
        name: name.trim(),
        scopes: chosen,
        role: role as Exclude<Role, 'platform-admin'>,
        ...(role !== 'tenant-admin' && team ? { teamId: team } : {}),
        ...(days.trim() ? { expiresAt: new Date(Date.now() + Number(days) * 86_400_000).toISOString() } : {}),
      }),
    onSuccess: (k) => {
      onCreated({ ...k, name: name.trim() });
      setName('');
    },
  });
  const held = SCOPES.filter((s) => me.data?.role === 'platform-admin' || me.data?.scopes.includes(s));
  // until the person picks scopes by hand, a key gets its role's
  const chosen = scopes ?? defaultScopes(role, held);
  if (!me.data) return null;
  const roles = (['viewer', 'member', 'team-admin', 'tenant-admin'] as Role[]).filter((r) => ROLE_RANK[r] <= ROLE_RANK[me.data.role]);
  const allowed = ROLE_SCOPES[role];
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
          <select
            data-testid="api-key-role"
            value={role}
            onChange={(e) => {
              setRole(e.target.value as Role);
              setScopes(null);
            }}
          >
            {roles.map((r) => (
              <option key={r} value={r}>
                {ROLE_WORDS[r]}
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
      <p className="role-allows" data-testid="api-key-role-allows">
        A {ROLE_WORDS[role]} key may {wordList(allowed.map((s) => SCOPE_WORDS[s]))}
        {role === 'team-admin' ? ', within its team' : role === 'tenant-admin' ? ', in the whole tenant' : ''}. Untick what this key does not need.
      </p>
      <fieldset className="scope-picker" data-testid="api-key-scopes-picker">
        <legend className="field-label">Scopes</legend>
        {held.map((s) => {
          const inRole = allowed.includes(s);
          return (
            <label
              key={s}
              className={`scope-option${inRole ? '' : ' scope-off'}`}
              title={inRole ? SCOPE_WORDS[s] : `a ${ROLE_WORDS[role]} key cannot ${SCOPE_WORDS[s]}`}
            >
              <input
                type="checkbox"
                data-testid={`api-key-scope-${s}`}
                checked={chosen.includes(s)}
                disabled={!inRole}
                onChange={(e) => setScopes(e.target.checked ? [...chosen, s] : chosen.filter((x) => x !== s))}
              />
              <span>{SCOPE_WORDS[s]}</span> <span className="mono muted small">{s}</span>
            </label>
          );
        })}
      </fieldset>
      {create.isError && (
        <div className="alert alert-error" role="alert" data-testid="api-key-error">
          {describeError(create.error)}
        </div>
      )}
      <div className="quota-actions">
        <span className="spacer" />
        <button type="submit" className="btn btn-primary" data-testid="api-key-create" disabled={create.isPending || !name.trim() || chosen.length === 0}>
          {create.isPending ? 'Creating…' : 'Create key'}
        </button>
      </div>
    </form>
  );
}

/** "a, b and c" */
function wordList(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? 'nothing') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}
