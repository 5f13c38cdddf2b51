'use client';

import { useEffect, useMemo, useRef, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { JOB_KINDS, PRIORITIES, TOPOLOGY_LEVELS, type Job, type JobCreate } from '@gantry/contracts';
import { describeError, isApiError } from '@/lib/api';
import { createJob, jobKeys } from '@/lib/queries/jobs';
import { capacityQuery } from '@/lib/queries/utilization';
import { useClient } from '@/lib/session';
import { useTeam } from '@/lib/team';
import { Modal } from './modal';
import { humanizeMessage } from '@/lib/messages';
import { migProfileOptions } from '@/lib/mig-profiles';

type ResourceType = 'gpus' | 'mig' | 'fraction';

interface FormState {
  teamId: string;
  name: string;
  kind: (typeof JOB_KINDS)[number];
  priority: (typeof PRIORITIES)[number];
  replicas: string;
  resourceType: ResourceType;
  gpus: string;
  migProfile: string;
  gpuFraction: string;
  gpuModel: string;
  topologyLevel: (typeof TOPOLOGY_LEVELS)[number];
  topologyRequired: boolean;
  preemptible: boolean;
  durationSeconds: string;
}

function newIdempotencyKey(): string {
  if (typeof crypto !== 'undefined' && typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`;
}

/** Numbers are sent as typed; an empty or malformed field is left for the API to reject. */
function num(s: string): number {
  return s.trim() === '' ? Number.NaN : Number(s);
}

export function toJobCreate(f: FormState): JobCreate {
  const resources: JobCreate['resources'] =
    f.resourceType === 'gpus' ? { gpus: num(f.gpus) } : f.resourceType === 'mig' ? { migProfile: f.migProfile.trim() } : { gpuFraction: num(f.gpuFraction) };
  if (f.gpuModel) resources.gpuModel = f.gpuModel;
  const body: JobCreate = {
    teamId: f.teamId,
    name: f.name.trim(),
    kind: f.kind,
    priority: f.priority,
    replicas: num(f.replicas),
    resources,
    topology: { level: f.topologyLevel, required: f.topologyRequired },
    preemptible: f.preemptible,
  };
  if (f.durationSeconds.trim() !== '') body.simulation = { durationSeconds: num(f.durationSeconds) };
  return body;
}

/** Which form field an API error detail (`resources.gpus`, `topology.level`, ...) belongs to. */
function fieldOf(path: string | undefined): keyof FormState | 'resources' | undefined {
  if (!path) return undefined;
  const p = path.replace(/^body\./, '').replace(/\[(\d+)\]/g, '.$1');
  if (p === 'teamId' || p === 'name' || p === 'kind' || p === 'priority' || p === 'replicas' || p === 'preemptible') return p;
  if (p === 'resources.gpus') return 'gpus';
  if (p === 'resources.migProfile') return 'migProfile';
  if (p === 'resources.gpuFraction') return 'gpuFraction';
  if (p === 'resources.gpuModel') return 'gpuModel';
  if (p === 'resources' || p.startsWith('resources.')) return 'resources';
  if (p === 'topology.level') return 'topologyLevel';
  if (p === 'topology.required') return 'topologyRequired';
  if (p.startsWith('simulation')) return 'durationSeconds';
  return undefined;
}

const FIELD_LABEL: Record<keyof FormState | 'resources', string> = {
  teamId: 'Team',
  name: 'Name',
  kind: 'Kind',
  priority: 'Priority',
  replicas: 'Replicas',
  resourceType: 'Type',
  gpus: 'GPUs per replica',
  migProfile: 'MIG profile',
  gpuFraction: 'Fraction',
  gpuModel: 'GPU model',
  topologyLevel: 'Topology level',
  topologyRequired: 'Topology required',
  preemptible: 'Preemptible',
  durationSeconds: 'Simulated duration',
  resources: 'Resources',
};

/** "GPUs per replica: " before a problem of `resources.gpus`; nothing for a problem of the whole request. */
function fieldLabel(path: string | undefined): string {
  const f = fieldOf(path);
  return f ? `${FIELD_LABEL[f]}: ` : '';
}

/** The form filled as a job was submitted (clone / resubmit), under a new name. */
export function formFromJob(job: Job): Partial<FormState> {
  const r = job.resources;
  return {
    teamId: job.teamId,
    name: nextName(job.name),
    kind: job.kind,
    priority: job.priority,
    replicas: String(job.replicas),
    resourceType: r.gpus !== undefined ? 'gpus' : r.migProfile !== undefined ? 'mig' : 'fraction',
    gpus: String(r.gpus ?? 1),
    migProfile: r.migProfile ?? '1g.10gb',
    gpuFraction: String(r.gpuFraction ?? 0.25),
    gpuModel: r.gpuModel ?? '',
    topologyLevel: job.topology.level,
    topologyRequired: job.topology.required,
    preemptible: job.preemptible,
    durationSeconds: job.simulation ? String(job.simulation.durationSeconds) : '',
  };
}

/** "llm" -> "llm-2", "llm-2" -> "llm-3" (names stay within the API's 100 characters). */
export function nextName(name: string): string {
  const m = /^(.*)-(\d+)$/.exec(name);
  return m ? `${m[1]}-${Number(m[2]) + 1}` : `${name.slice(0, 98)}-2`;
}

export function JobSubmitDialog({
  onClose,
  onSubmitted,
  initial,
  title = 'Submit a job',
}: {
  onClose: () => void;
  onSubmitted: (job: Job) => void;
  initial?: Partial<FormState>;
  title?: string;
}) {
  const client = useClient();
  const queryClient = useQueryClient();
  const { teams, teamId: selectedTeam } = useTeam();
  const capacity = useQuery(capacityQuery(client));
  const models = useMemo(() => [...new Set((capacity.data?.byModel ?? []).map((r) => r.gpuModel))].sort(), [capacity.data]);

  const [form, setForm] = useState<FormState>(() => ({
    teamId: selectedTeam || teams[0]?.id || '',
    name: '',
    kind: 'training',
    priority: 'normal',
    replicas: '1',
    resourceType: 'gpus',
    gpus: '1',
    migProfile: '1g.10gb',
    gpuFraction: '0.25',
    gpuModel: '',
    topologyLevel: 'any',
    topologyRequired: false,
    preemptible: false,
    durationSeconds: '60',
    ...initial,
  }));
  const migOptions = migProfileOptions(form.gpuModel, models);
  // a profile the chosen model does not have gives way to the model's first one
  const firstProfile = migOptions[0]?.name;
  const profileOffered = migOptions.some((o) => o.name === form.migProfile);
  useEffect(() => {
    if (form.resourceType === 'mig' && firstProfile && !profileOffered) setForm((f) => ({ ...f, migProfile: firstProfile }));
  }, [form.resourceType, firstProfile, profileOffered]);
  // one key per request body: a double click, or a retry after a lost answer, creates one job
  const idempotencyKey = useRef(newIdempotencyKey());

  const set = <K extends keyof FormState>(k: K, v: FormState[K]) => {
    setForm((f) => ({ ...f, [k]: v }));
    idempotencyKey.current = newIdempotencyKey();
  };

  const submit = useMutation({
    mutationFn: (body: JobCreate) => createJob(client, body, idempotencyKey.current),
    onSuccess: (job) => {
      void queryClient.invalidateQueries({ queryKey: jobKeys.all });
      onSubmitted(job);
    },
    onError: (e) => {
      // the API answered: the next attempt is a new request
      if (isApiError(e)) idempotencyKey.current = newIdempotencyKey();
    },
  });

  const details = isApiError(submit.error) ? (submit.error.details ?? []) : [];
  const fieldErrors = new Map<string, string[]>();
  for (const d of details) {
    const f = fieldOf(d.field);
    if (f) fieldErrors.set(f, [...(fieldErrors.get(f) ?? []), d.problem]);
  }
  const err = (k: string) =>
    fieldErrors.get(k)?.map((p, i) => (
      <span className="field-error" data-testid="field-error" data-field={k} key={i}>
        {p}
      </span>
    ));
  const invalid = (k: string) => (fieldErrors.has(k) ? true : undefined);

  return (
    <Modal title={title} onClose={onClose} testId="submit-dialog" initialFocus='[data-testid="submit-name"]'>
      <form
        className="form"
        data-testid="submit-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          submit.mutate(toJobCreate(form));
        }}
      >
        {submit.isError && (
          <div className="alert alert-error" role="alert" data-testid="submit-error">
            <div data-testid="submit-error-message">
              <strong>{describeError(submit.error)}</strong>
            </div>
            {details.length > 0 && (
              <ul className="error-details">
                {details.map((d, i) => (
                  <li key={i} data-testid="submit-error-detail" data-field={d.field ?? ''}>
                    {fieldLabel(d.field)}
                    {humanizeMessage(d.problem)}
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}

        <div className="form-grid">
          <label className="field">
            <span className="field-label">Team</span>
            {teams.length > 0 ? (
              <select data-testid="submit-team" value={form.teamId} onChange={(e) => set('teamId', e.target.value)} aria-invalid={invalid('teamId')}>
                {!form.teamId && <option value="">Choose a team</option>}
                {teams.map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.name}
                  </option>
                ))}
              </select>
            ) : (
              <input
                data-testid="submit-team"
                value={form.teamId}
                placeholder="team id"
                onChange={(e) => set('teamId', e.target.value)}
                aria-invalid={invalid('teamId')}
              />
            )}
            {err('teamId')}
          </label>
          <label className="field">
            <span className="field-label">Name</span>
            <input
              data-testid="submit-name"
              value={form.name}
              placeholder="llm-pretrain"
              spellCheck={false}
              onChange={(e) => set('name', e.target.value)}
              aria-invalid={invalid('name')}
            />
            {err('name')}
          </label>
          <label className="field">
            <span className="field-label">Kind</span>
            <select
              data-testid="submit-kind"
              value={form.kind}
              onChange={(e) => set('kind', e.target.value as FormState['kind'])}
              aria-invalid={invalid('kind')}
            >
              {JOB_KINDS.map((k) => (
                <option key={k} value={k}>
                  {k}
                </option>
              ))}
            </select>
            {err('kind')}
          </label>
          <label className="field">
            <span className="field-label">Priority</span>
            <select
              data-testid="submit-priority"
              value={form.priority}
              onChange={(e) => set('priority', e.target.value as FormState['priority'])}
              aria-invalid={invalid('priority')}
            >
              {PRIORITIES.map((p) => (
                <option key={p} value={p}>
                  {p}
                </option>
              ))}
            </select>
            {err('priority')}
          </label>
          <label className="field">
            <span className="field-label">Replicas (gang)</span>
            <input
              data-testid="submit-replicas"
              type="number"
              min={1}
              max={512}
              value={form.replicas}
              onChange={(e) => set('replicas', e.target.value)}
              aria-invalid={invalid('replicas')}
            />
            {err('replicas')}
          </label>
          <label className="field">
            <span className="field-label">GPU model</span>
            <select data-testid="submit-gpu-model" value={form.gpuModel} onChange={(e) => set('gpuModel', e.target.value)} aria-invalid={invalid('gpuModel')}>
              <option value="">any</option>
              {models.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
            {err('gpuModel')}
          </label>
        </div>

        <fieldset className="fieldset">
          <legend>Resources per replica</legend>
          <div className="form-grid">
            <label className="field">
              <span className="field-label">Type</span>
              <select data-testid="submit-resource-type" value={form.resourceType} onChange={(e) => set('resourceType', e.target.value as ResourceType)}>
                <option value="gpus">Whole GPUs</option>
                <option value="mig">MIG profile</option>
                <option value="fraction">Fraction of a GPU</option>
              </select>
            </label>
            {form.resourceType === 'gpus' && (
              <label className="field">
                <span className="field-label">GPUs per replica</span>
                <input
                  data-testid="submit-gpus"
                  type="number"
                  min={1}
                  max={64}
                  value={form.gpus}
                  onChange={(e) => set('gpus', e.target.value)}
                  aria-invalid={invalid('gpus')}
                />
                {err('gpus')}
              </label>
            )}
            {form.resourceType === 'mig' && (
              <label className="field">
                <span className="field-label">MIG profile</span>
                <select
                  data-testid="submit-mig-profile"
                  value={form.migProfile}
                  onChange={(e) => set('migProfile', e.target.value)}
                  aria-invalid={invalid('migProfile')}
                >
                  {!profileOffered && <option value={form.migProfile}>{form.migProfile || 'Choose a profile'}</option>}
                  {migOptions.map((o) => (
                    <option key={o.name} value={o.name}>
                      {o.label}
                    </option>
                  ))}
                </select>
                {err('migProfile')}
              </label>
            )}
            {form.resourceType === 'fraction' && (
              <label className="field">
                <span className="field-label">Fraction (0-1)</span>
                <input
                  data-testid="submit-gpu-fraction"
                  type="number"
                  min={0.05}
                  max={0.95}
                  step={0.05}
                  value={form.gpuFraction}
                  onChange={(e) => set('gpuFraction', e.target.value)}
                  aria-invalid={invalid('gpuFraction')}
                />
                {err('gpuFraction')}
              </label>
            )}
          </div>
          {err('resources')}
        </fieldset>

        <fieldset className="fieldset">
          <legend>Placement</legend>
          <div className="form-grid">
            <label className="field">
              <span className="field-label">Topology level</span>
              <select
                data-testid="submit-topology-level"
                value={form.topologyLevel}
                onChange={(e) => set('topologyLevel', e.target.value as FormState['topologyLevel'])}
                aria-invalid={invalid('topologyLevel')}
              >
                {TOPOLOGY_LEVELS.map((l) => (
                  <option key={l} value={l}>
                    {l === 'any' ? 'any' : `same ${l}`}
                  </option>
                ))}
              </select>
              {err('topologyLevel')}
            </label>
            <label className="field">
              <span className="field-label">Simulated duration (s)</span>
              <input
                data-testid="submit-duration"
                type="number"
                min={1}
                value={form.durationSeconds}
                placeholder="until cancelled"
                onChange={(e) => set('durationSeconds', e.target.value)}
                aria-invalid={invalid('durationSeconds')}
              />
              {err('durationSeconds')}
            </label>
          </div>
          <div className="checks">
            <label className="check">
              <input
                data-testid="submit-topology-required"
                type="checkbox"
                checked={form.topologyRequired}
                onChange={(e) => set('topologyRequired', e.target.checked)}
              />
              Topology required (otherwise preferred)
            </label>
            <label className="check">
              <input data-testid="submit-preemptible" type="checkbox" checked={form.preemptible} onChange={(e) => set('preemptible', e.target.checked)} />
              Preemptible
            </label>
          </div>
          {err('topologyRequired')}
          {err('preemptible')}
        </fieldset>

        <div className="modal-foot">
          <span className="muted small">Sent as POST /v1/jobs with an Idempotency-Key.</span>
          <button type="button" className="btn" onClick={onClose}>
            Close
          </button>
          <button type="submit" className="btn btn-primary" data-testid="submit-job" disabled={submit.isPending}>
            {submit.isPending ? 'Submitting…' : 'Submit job'}
          </button>
        </div>
      </form>
    </Modal>
  );
}
