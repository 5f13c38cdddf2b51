'use client';

import { useEffect, useMemo, useRef, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Endpoint, EndpointCreate } from '@gantry/contracts';
import { describeError, isApiError } from '@/lib/api';
import { createEndpoint, endpointKeys } from '@/lib/queries/endpoints';
import { capacityQuery } from '@/lib/queries/utilization';
import { useClient } from '@/lib/session';
import { useTeam } from '@/lib/team';
import { GpuResourceFields, toResources, type ResourceFormState } from '../gpu-resource-fields';
import { EndpointSettingsFields, errorsByField, settingsBody, type EndpointSettingsForm } from './settings-fields';

const newKey = () =>
  typeof crypto !== 'undefined' && typeof crypto.randomUUID === 'function'
    ? crypto.randomUUID()
    : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;

/** Create an endpoint: team, name, model, per-replica GPUs from the catalog, autoscaling settings. */
export function EndpointCreateDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (e: Endpoint) => void }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const { teams, teamId: selectedTeam } = useTeam();
  const capacity = useQuery(capacityQuery(client));
  const models = useMemo(() => [...new Set((capacity.data?.byModel ?? []).map((r) => r.gpuModel))].sort(), [capacity.data]);

  const [teamId, setTeamId] = useState(selectedTeam || teams[0]?.id || '');
  const [name, setName] = useState('');
  const [model, setModel] = useState('');
  const [resources, setResources] = useState<ResourceFormState>({ gpuModel: '', kind: 'gpus', gpus: '1', migProfile: '', gpuFraction: '0.5' });
  const [settings, setSettings] = useState<EndpointSettingsForm>({
    minReplicas: '0',
    maxReplicas: '2',
    targetConcurrency: '100',
    scaleToZeroAfterSeconds: '300',
    warmPool: '0',
  });
  // one key per request body: a double click creates one endpoint
  const idempotencyKey = useRef(newKey());
  useEffect(() => {
    idempotencyKey.current = newKey();
  }, [teamId, name, model, resources, settings]);

  const create = useMutation({
    mutationFn: (body: EndpointCreate) => createEndpoint(client, body, idempotencyKey.current),
    onSuccess: (e) => {
      void queryClient.invalidateQueries({ queryKey: endpointKeys.all });
      onCreated(e);
    },
  });

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && onClose();
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);

  const details = isApiError(create.error) ? (create.error.details ?? []) : [];
  const errors = errorsByField(details);
  const fieldErr = (k: string) =>
    errors.get(k)?.map((p, i) => (
      <span className="field-error" data-testid="field-error" data-field={k} key={i}>
        {p}
      </span>
    ));

  return (
    <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div className="modal" role="dialog" aria-modal="true" aria-labelledby="endpoint-create-title" data-testid="endpoint-create-dialog">
        <div className="modal-head">
          <h2 id="endpoint-create-title">Create an endpoint</h2>
          <button type="button" className="btn-close" aria-label="Close" onClick={onClose}>
            ×
          </button>
        </div>
        <form
          className="form"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate({ teamId, name: name.trim(), model: model.trim(), resources: toResources(resources), ...settingsBody(settings) });
          }}
        >
          {create.isError && (
            <div className="alert alert-error" role="alert" data-testid="endpoint-create-error">
              {describeError(create.error)}
            </div>
          )}
          <div className="form-grid">
            <label className="field">
              <span className="field-label">Team</span>
              <select data-testid="endpoint-create-team" value={teamId} onChange={(e) => setTeamId(e.target.value)}>
                {!teamId && <option value="">Choose a team</option>}
                {teams.map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.name}
                  </option>
                ))}
              </select>
              {fieldErr('teamId')}
            </label>
            <label className="field">
              <span className="field-label">Name</span>
              <input
                data-testid="endpoint-create-name"
                value={name}
                placeholder="llm-chat"
                spellCheck={false}
                autoFocus
                onChange={(e) => setName(e.target.value)}
              />
              {fieldErr('name')}
            </label>
            <label className="field">
              <span className="field-label">Model</span>
              <input
                data-testid="endpoint-create-model"
                value={model}
                placeholder="llama-3-8b-instruct"
                spellCheck={false}
                onChange={(e) => setModel(e.target.value)}
              />
              {fieldErr('model')}
            </label>
          </div>
          <fieldset className="fieldset">
            <legend>Resources per replica</legend>
            <GpuResourceFields value={resources} onChange={setResources} models={models} testIdPrefix="endpoint-create" errors={errors} />
          </fieldset>
          <fieldset className="fieldset">
            <legend>Autoscaling</legend>
            <EndpointSettingsFields value={settings} onChange={setSettings} errors={errors} testIdPrefix="endpoint-create" />
          </fieldset>
          <div className="modal-foot">
            <span className="muted small">Sent as POST /v1/endpoints; replicas count against the team&apos;s quota.</span>
            <button type="button" className="btn" onClick={onClose}>
              Close
            </button>
            <button type="submit" className="btn btn-primary" data-testid="endpoint-create-submit" disabled={create.isPending}>
              {create.isPending ? 'Creating…' : 'Create endpoint'}
            </button>
          </div>
        </form>
      </div>
    </div>
  );
}
