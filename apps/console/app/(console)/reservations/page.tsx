'use client';

import { useMemo, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Reservation, ReservationCreate } from '@gantry/contracts';
import { PageHeader } from '@/components/page-header';
import { Empty, ErrorPanel, Loading } from '@/components/states';
import { describeError, isApiError } from '@/lib/api';
import { meQuery } from '@/lib/queries/me';
import { reservationKeys, reservationsQuery } from '@/lib/queries/reservations';
import { useClient } from '@/lib/session';
import { useTeam } from '@/lib/team';

const DAY = 86_400_000;
const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

/** The browser's time zone (the calendar's default). */
const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** How far `zone`'s wall clock is ahead of UTC at `t` (ms). */
function zoneOffset(t: number, zone: string): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
      .formatToParts(new Date(t))
      .map((p) => [p.type, Number(p.value)]),
  );
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!) - Math.floor(t / 1000) * 1000;
}

/** Monday 00:00 in `zone` of the week holding `t`. */
function weekStart(t: number, zone: string): number {
  const wall = new Date(t + zoneOffset(t, zone));
  const day = (wall.getUTCDay() + 6) % 7;
  const monday = Date.UTC(wall.getUTCFullYear(), wall.getUTCMonth(), wall.getUTCDate()) - day * DAY;
  return monday - zoneOffset(monday, zone);
}
const fmtDay = (t: number, zone: string) => new Date(t).toLocaleDateString('en', { month: 'short', day: 'numeric', timeZone: zone });
const dayOfMonth = (t: number, zone: string) => new Date(t).toLocaleDateString('en', { day: 'numeric', timeZone: zone });
const fmtTime = (t: number, zone: string) =>
  new Date(t)
    .toLocaleString('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
    .replace(',', '');

/** Reservations: a week calendar per GPU model (a bar per window) and a form to reserve GPUs or whole nodes. */
export default function ReservationsPage() {
  const client = useClient();
  const me = useQuery(meQuery(client));
  const [zone, setZone] = useState(browserZone);
  const [week, setWeek] = useState(() => weekStart(Date.now(), browserZone()));
  const [editing, setEditing] = useState<Reservation | null>(null);
  const zones = [...new Set([browserZone(), 'UTC'])];
  const from = new Date(week).toISOString();
  const to = new Date(week + 7 * DAY).toISOString();
  const q = useQuery(reservationsQuery(client, from, to));
  const [model, setModel] = useState<string>('');
  const models = q.data?.capacity.map((c) => c.gpuModel) ?? [];
  const shownModel = model || models[0] || '';
  const canRead = !!me.data && (me.data.role === 'platform-admin' || me.data.scopes.includes('quotas:read'));
  const canEdit = !!me.data && me.data.scopes.includes('quotas:write') && ['platform-admin', 'tenant-admin', 'team-admin'].includes(me.data.role);

  return (
    <>
      <PageHeader
        title="Reservations"
        subtitle="GPUs or whole nodes of a model held for a team in a window. Before and after it the GPUs serve others, but only with work that can be checkpointed by the start."
      />
      {!me.data ? (
        <Loading />
      ) : !canRead ? (
        <Empty>This key or session lacks the quotas:read scope.</Empty>
      ) : q.isError && !q.data ? (
        <ErrorPanel error={q.error} onRetry={() => void q.refetch()} title="Cannot load reservations" />
      ) : !q.data ? (
        <Loading />
      ) : (
        <>
          <section className="section card pad" aria-labelledby="calendar-title">
            <div className="card-head res-head">
              <h2 className="card-title" id="calendar-title">
                Week of {fmtDay(week, zone)} <span data-testid="res-zone-name">({zone})</span>
              </h2>
              <div className="res-controls">
                <label className="field res-model">
                  <span className="field-label">Time zone</span>
                  <select
                    data-testid="res-zone"
                    value={zone}
                    onChange={(e) => {
                      setZone(e.target.value);
                      setWeek(weekStart(week + DAY, e.target.value));
                    }}
                  >
                    {zones.map((z) => (
                      <option key={z} value={z}>
                        {z}
                      </option>
                    ))}
                  </select>
                </label>
                <label className="field res-model">
                  <span className="field-label">GPU model</span>
                  <select data-testid="res-model" value={shownModel} onChange={(e) => setModel(e.target.value)}>
                    {models.map((m) => (
                      <option key={m} value={m}>
                        {m}
                      </option>
                    ))}
                  </select>
                </label>
                <button type="button" className="btn btn-outline btn-sm" onClick={() => setWeek(week - 7 * DAY)} data-testid="res-prev">
                  Previous week
                </button>
                <button type="button" className="btn btn-outline btn-sm" onClick={() => setWeek(weekStart(Date.now(), zone))}>
                  This week
                </button>
                <button type="button" className="btn btn-outline btn-sm" onClick={() => setWeek(week + 7 * DAY)} data-testid="res-next">
                  Next week
                </button>
              </div>
            </div>
            <WeekCalendar
              week={week}
              items={q.data.items.filter((r) => r.gpuModel === shownModel)}
              capacity={q.data.capacity.find((c) => c.gpuModel === shownModel)?.gpus ?? 0}
              canEdit={canEdit}
              zone={zone}
              onEdit={setEditing}
            />
          </section>
          {canEdit && (
            <ReserveForm
              key={editing?.id ?? 'new'}
              models={q.data.capacity.map((c) => c.gpuModel)}
              defaultModel={shownModel}
              editing={editing}
              onDone={() => setEditing(null)}
            />
          )}
        </>
      )}
    </>
  );
}

function WeekCalendar({
  week,
  items,
  capacity,
  canEdit,
  zone,
  onEdit,
}: {
  week: number;
  items: Reservation[];
  capacity: number;
  canEdit: boolean;
  zone: string;
  onEdit: (r: Reservation) => void;
}) {
  const client = useClient();
  const qc = useQueryClient();
  const { teamName } = useTeam();
  const remove = useMutation({
    mutationFn: (id: string) => client.reservations.remove(id),
    onSuccess: () => void qc.invalidateQueries({ queryKey: reservationKeys.all }),
  });
  const end = week + 7 * DAY;
  const pct = (t: number) => `${((Math.min(Math.max(t, week), end) - week) / (7 * DAY)) * 100}%`;
  const now = Date.now();
  return (
    <div className="res-calendar" data-testid="res-calendar">
      <p className="muted small">{capacity} GPUs in the cluster. Each bar is a window; a filled bar is open now.</p>
      <div className="res-row res-days" aria-hidden="true">
        <div className="res-label" />
        <div className="res-track">
          {WEEKDAYS.map((d, i) => (
            <span key={d} className="res-day" style={{ left: `${(i / 7) * 100}%` }}>
              {d} {dayOfMonth(week + i * DAY + DAY / 2, zone)}
            </span>
          ))}
        </div>
      </div>
      {items.length === 0 ? (
        <Empty>No reservation of this model this week.</Empty>
      ) : (
        <ul className="res-list">
          {items.map((r) => (
            <li key={r.id} className="res-row" data-testid="res-item" data-reservation-id={r.id}>
              <div className="res-label">
                <span className="strong-link">{r.name}</span>
                <span className="muted small">
                  {teamName(r.teamId)} · {r.nodes !== null ? `${r.nodes} node${r.nodes === 1 ? '' : 's'} (${r.heldGpus} GPUs)` : `${r.heldGpus} GPUs`}
                  {r.recurrence ? ` · ${r.recurrence.cron} ${r.recurrence.timeZone}` : ''}
                  {r.active && <span className="pill pill-ok"> open now</span>}
                </span>
                {canEdit && (
                  <button
                    type="button"
                    className="btn btn-link btn-sm"
                    data-testid="res-edit"
                    onClick={() => onEdit(r)}
                    aria-label={`Edit reservation ${r.name}`}
                  >
                    Edit
                  </button>
                )}
                {canEdit && (
                  <button
                    type="button"
                    className="btn btn-link btn-sm"
                    data-testid="res-delete"
                    onClick={() => remove.mutate(r.id)}
                    disabled={remove.isPending}
                    aria-label={`Delete reservation ${r.name}`}
                  >
                    Delete
                  </button>
                )}
              </div>
              <div className="res-track">
                {WEEKDAYS.map((d, i) => (
                  <span key={d} className="res-grid" style={{ left: `${(i / 7) * 100}%` }} />
                ))}
                {r.windows.map((w) => {
                  const s = Date.parse(w.start);
                  const e = Date.parse(w.end);
                  const open = s <= now && now < e;
                  return (
                    <span
                      key={w.start}
                      role="img"
                      data-testid="res-bar"
                      className={`res-bar${open ? ' res-bar-open' : ''}`}
                      style={{ left: pct(s), width: `calc(${pct(e)} - ${pct(s)})` }}
                      aria-label={`${r.name}: ${r.heldGpus} GPUs from ${fmtTime(s, zone)} to ${fmtTime(e, zone)} ${zone}`}
                      title={`${fmtTime(s, zone)} – ${fmtTime(e, zone)} ${zone}`}
                    />
                  );
                })}
              </div>
            </li>
          ))}
        </ul>
      )}
      {remove.isError && (
        <div className="alert alert-error" role="alert">
          {describeError(remove.error)}
        </div>
      )}
    </div>
  );
}

interface Draft {
  teamId: string;
  name: string;
  gpuModel: string;
  size: 'gpus' | 'nodes';
  count: string;
  start: string;
  end: string;
  recurring: boolean;
  cron: string;
  timeZone: string;
  durationMinutes: string;
}

/** datetime-local value (local time) -> ISO. */
const toIso = (local: string) => (local ? new Date(local).toISOString() : '');
const localInput = (t: number) => {
  const d = new Date(t - new Date(t).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
};

function ReserveForm({
  models,
  defaultModel,
  editing,
  onDone,
}: {
  models: string[];
  defaultModel: string;
  /** The reservation being edited (PATCH), or null for a new one. */
  editing: Reservation | null;
  onDone: () => void;
}) {
  const client = useClient();
  const qc = useQueryClient();
  const { teams, teamId } = useTeam();
  const [draft, setDraft] = useState<Draft>(() => {
    const start = Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 3_600_000;
    if (editing) {
      return {
        teamId: editing.teamId,
        name: editing.name,
        gpuModel: editing.gpuModel,
        size: editing.nodes !== null ? 'nodes' : 'gpus',
        count: String(editing.nodes ?? editing.gpus ?? ''),
        start: localInput(Date.parse(editing.startsAt)),
        end: localInput(Date.parse(editing.endsAt)),
        recurring: editing.recurrence !== null,
        cron: editing.recurrence?.cron ?? '0 9 * * 1-5',
        timeZone: editing.recurrence?.timeZone ?? browserZone(),
        durationMinutes: String(editing.recurrence?.durationMinutes ?? 480),
      };
    }
    return {
      teamId: teamId || teams[0]?.id || '',
      name: '',
      gpuModel: defaultModel,
      size: 'gpus',
      count: '8',
      start: localInput(start),
      end: localInput(start + 4 * 3_600_000),
      recurring: false,
      cron: '0 9 * * 1-5',
      timeZone: browserZone(),
      durationMinutes: '480',
    };
  });
  const set = <K extends keyof Draft>(k: K, v: Draft[K]) => setDraft((d) => ({ ...d, [k]: v }));
  const create = useMutation({
    mutationFn: (body: ReservationCreate) => {
      if (!editing) return client.reservations.create(body);
      const { teamId: _team, gpuModel: _model, recurrence, ...changes } = body;
      return client.reservations.update(editing.id, { ...changes, recurrence: recurrence ?? null });
    },
    onSuccess: () => {
      set('name', '');
      void qc.invalidateQueries({ queryKey: reservationKeys.all });
      if (editing) onDone();
    },
  });
  const details = useMemo(() => (isApiError(create.error) ? (create.error.details ?? []) : []), [create.error]);
  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    create.mutate({
      teamId: draft.teamId || teamId || teams[0]?.id || '',
      name: draft.name.trim(),
      gpuModel: draft.gpuModel || defaultModel,
      ...(draft.size === 'gpus' ? { gpus: Number(draft.count) } : { nodes: Number(draft.count) }),
      startsAt: toIso(draft.start),
      endsAt: toIso(draft.end),
      ...(draft.recurring ? { recurrence: { cron: draft.cron, timeZone: draft.timeZone, durationMinutes: Number(draft.durationMinutes) } } : {}),
    });
  };
  return (
    <section className="section" aria-labelledby="reserve-title">
      <form className="card pad form" onSubmit={submit} data-testid="res-form">
        <h2 className="card-title" id="reserve-title">
          {editing ? `Edit reservation ${editing.name}` : 'Reserve capacity'}
        </h2>
        {create.isError && (
          <div className="alert alert-error" role="alert" data-testid="res-error">
            {describeError(create.error)}
            {details.length > 0 && (
              <ul className="error-details">
                {details.map((d, i) => (
                  <li key={i}>
                    {d.field ? <span className="mono">{d.field}</span> : null} {d.problem}
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}
        {create.isSuccess && (
          <div className="alert alert-ok" role="status" data-testid="res-created">
            {editing ? 'Saved' : 'Reserved'}: {create.data.name}
          </div>
        )}
        <div className="form-grid">
          <label className="field">
            <span className="field-label">Team</span>
            <select data-testid="res-team" value={draft.teamId} disabled={!!editing} onChange={(e) => set('teamId', e.target.value)}>
              {teams.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
            </select>
          </label>
          <label className="field">
            <span className="field-label">Name</span>
            <input data-testid="res-name" value={draft.name} onChange={(e) => set('name', e.target.value)} placeholder="launch run" required />
          </label>
          <label className="field">
            <span className="field-label">GPU model</span>
            <select data-testid="res-form-model" value={draft.gpuModel || defaultModel} disabled={!!editing} onChange={(e) => set('gpuModel', e.target.value)}>
              {models.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          </label>
          <label className="field">
            <span className="field-label">Reserve</span>
            <select data-testid="res-size" value={draft.size} onChange={(e) => set('size', e.target.value as Draft['size'])}>
              <option value="gpus">GPUs</option>
              <option value="nodes">Whole nodes</option>
            </select>
          </label>
          <label className="field">
            <span className="field-label">How many</span>
            <input data-testid="res-count" type="number" min={1} value={draft.count} onChange={(e) => set('count', e.target.value)} />
          </label>
          <label className="field">
            <span className="field-label">
              {draft.recurring ? 'First window from' : 'Starts'} <span className="muted small">({browserZone()})</span>
            </span>
            <input data-testid="res-start" type="datetime-local" value={draft.start} onChange={(e) => set('start', e.target.value)} />
          </label>
          <label className="field">
            <span className="field-label">
              {draft.recurring ? 'Last window before' : 'Ends'} <span className="muted small">({browserZone()})</span>
            </span>
            <input data-testid="res-end" type="datetime-local" value={draft.end} onChange={(e) => set('end', e.target.value)} />
          </label>
          <label className="check">
            <input type="checkbox" data-testid="res-recurring" checked={draft.recurring} onChange={(e) => set('recurring', e.target.checked)} /> Recurring
            (follow the sun)
          </label>
          {draft.recurring && (
            <>
              <label className="field">
                <span className="field-label">Cron (5 fields)</span>
                <input data-testid="res-cron" className="mono" value={draft.cron} onChange={(e) => set('cron', e.target.value)} />
              </label>
              <label className="field">
                <span className="field-label">Time zone</span>
                <input data-testid="res-tz" value={draft.timeZone} onChange={(e) => set('timeZone', e.target.value)} />
              </label>
              <label className="field">
                <span className="field-label">Window length (minutes)</span>
                <input
                  data-testid="res-duration"
                  type="number"
                  min={1}
                  value={draft.durationMinutes}
                  onChange={(e) => set('durationMinutes', e.target.value)}
                />
              </label>
            </>
          )}
        </div>
        <div className="page-actions">
          <button type="submit" className="btn btn-primary" data-testid="res-submit" disabled={create.isPending}>
            {editing ? 'Save changes' : 'Reserve'}
          </button>
          {editing && (
            <button type="button" className="btn btn-outline" data-testid="res-cancel-edit" onClick={onDone}>
              Cancel
            </button>
          )}
        </div>
      </form>
    </section>
  );
}
