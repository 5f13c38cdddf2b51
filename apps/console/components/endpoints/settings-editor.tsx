'use client';

import { useEffect, useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { EndpointDetail } from '@gantry/contracts';
import { describeError, isApiError } from '@/lib/api';
import { endpointKeys, updateEndpoint } from '@/lib/queries/endpoints';
import { useClient } from '@/lib/session';
import { EndpointSettingsFields, errorsByField, settingsBody, settingsForm, type EndpointSettingsForm } from './settings-fields';

/** Edit the model and the autoscaling settings (PATCH); the API's refusal is shown per field. */
export function EndpointSettingsEditor({ endpoint }: { endpoint: EndpointDetail }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const [model, setModel] = useState(endpoint.model);
  const [form, setForm] = useState<EndpointSettingsForm>(settingsForm(endpoint));
  const [dirty, setDirty] = useState(false);
  // the server's values show until the operator edits; a save makes them the server's again
  useEffect(() => {
    if (dirty) return;
    setModel(endpoint.model);
    setForm(settingsForm(endpoint));
  }, [endpoint, dirty]);
  const save = useMutation({
    mutationFn: () => updateEndpoint(client, endpoint.id, { model: model.trim(), ...settingsBody(form) }),
    onSuccess: (e) => {
      queryClient.setQueryData(endpointKeys.detail(endpoint.id), e);
      setDirty(false);
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: endpointKeys.all }),
  });
  const errors = errorsByField(isApiError(save.error) ? (save.error.details ?? []) : []);
  return (
    <form
      className="card pad form"
      data-testid="endpoint-settings"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <div className="form-grid">
        <label className="field">
          <span className="field-label">Model</span>
          <input
            data-testid="endpoint-settings-model"
            value={model}
            spellCheck={false}
            onChange={(e) => {
              setDirty(true);
              setModel(e.target.value);
            }}
          />
          {errors.get('model')?.map((p, i) => (
            <span className="field-error" key={i}>
              {p}
            </span>
          ))}
        </label>
      </div>
      <EndpointSettingsFields
        value={form}
        onChange={(v) => {
          setDirty(true);
          setForm(v);
        }}
        errors={errors}
        testIdPrefix="endpoint-settings"
      />
      {save.isError && (
        <div className="alert alert-error small" role="alert" data-testid="endpoint-settings-error">
          {describeError(save.error)}
        </div>
      )}
      <div className="endpoint-form-actions">
        <button type="submit" className="btn btn-primary" data-testid="endpoint-settings-save" disabled={!dirty || save.isPending}>
          {save.isPending ? 'Saving…' : 'Save settings'}
        </button>{' '}
        <button
          type="button"
          className="btn btn-ghost"
          disabled={!dirty || save.isPending}
          onClick={() => {
            save.reset();
            setDirty(false);
          }}
        >
          Discard
        </button>
        {save.isSuccess && !dirty && (
          <span className="muted small" data-testid="endpoint-settings-saved">
            {' '}
            Saved.
          </span>
        )}
      </div>
    </form>
  );
}
