'use client';

import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { BareMetalLease } from '@gantry/contracts';
import { describeError, isApiError } from '@/lib/api';
import { bareMetalKeys, requestBareMetal } from '@/lib/queries/bare-metal';
import { useClient } from '@/lib/session';
import { useTeam } from '@/lib/team';

const GPU_MODELS = ['H100-80GB', 'A100-80GB'] as const;

/** Request whole nodes as bare metal: team, name, GPU model, node count, image, one leaf. */
export function BareMetalRequestForm({ onCreated, onClose }: { onCreated: (l: BareMetalLease) => void; onClose: () => void }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const { teams, teamId: selected } = useTeam();
  const [form, setForm] = useState({
    teamId: selected || teams[0]?.id || '',
    name: '',
    gpuModel: 'H100-80GB',
    count: 1,
    image: 'ubuntu-22.04-cuda-12.4',
    sameLeaf: false,
  });
  const create = useMutation({
    mutationFn: () => requestBareMetal(client, form),
    onSuccess: (l) => {
      void queryClient.invalidateQueries({ queryKey: bareMetalKeys.all });
      onCreated(l);
    },
  });
  const fields = isApiError(create.error) ? (create.error.details ?? []).map((d) => d.field) : [];
  const set = <K extends keyof typeof form>(k: K, v: (typeof form)[K]) => setForm((f) => ({ ...f, [k]: v }));

  return (
    <form
      className="card"
      data-testid="bare-metal-form"
      onSubmit={(e) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <div className="card-header">
        <h2>Request bare-metal nodes</h2>
      </div>
      {create.isError && (
        <div className="alert alert-error" role="alert" data-testid="bare-metal-error">
          {describeError(create.error)}
        </div>
      )}
      <div className="form-grid">
        <label className="field">
          <span className="field-label">Team</span>
          <select data-testid="bm-team" value={form.teamId} onChange={(e) => set('teamId', e.target.value)} aria-invalid={fields.includes('teamId')}>
            {!form.teamId && <option value="">Choose a team</option>}
            {teams.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span className="field-label">Name</span>
          <input
            data-testid="bm-name"
            value={form.name}
            placeholder="db-hosts"
            spellCheck={false}
            onChange={(e) => set('name', e.target.value)}
            aria-invalid={fields.includes('name')}
          />
        </label>
        <label className="field">
          <span className="field-label">GPU model</span>
          <select data-testid="bm-model" value={form.gpuModel} onChange={(e) => set('gpuModel', e.target.value)} aria-invalid={fields.includes('gpuModel')}>
            {GPU_MODELS.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span className="field-label">Nodes</span>
          <input
            data-testid="bm-count"
            type="number"
            min={1}
            max={64}
            value={form.count}
            onChange={(e) => set('count', Number(e.target.value))}
            aria-invalid={fields.includes('count')}
          />
        </label>
        <label className="field">
          <span className="field-label">OS image</span>
          <input
            data-testid="bm-image"
            value={form.image}
            spellCheck={false}
            onChange={(e) => set('image', e.target.value)}
            aria-invalid={fields.includes('image')}
          />
        </label>
        <label className="field">
          <input data-testid="bm-same-leaf" type="checkbox" checked={form.sameLeaf} onChange={(e) => set('sameLeaf', e.target.checked)} />
          <span>All nodes under one leaf switch</span>
        </label>
      </div>
      <div className="form-actions">
        <button type="submit" className="btn btn-primary" data-testid="bm-submit" disabled={create.isPending}>
          {create.isPending ? 'Requesting…' : 'Request nodes'}
        </button>
        <button type="button" className="btn btn-ghost" onClick={onClose}>
          Close
        </button>
      </div>
    </form>
  );
}
