'use client';

import { migProfileOptions } from '@/lib/mig-profiles';

export type ResourceKind = 'gpus' | 'mig' | 'fraction';

/** What one replica asks for, as typed in a form (numbers as text until sent). */
export interface ResourceFormState {
  gpuModel: string;
  kind: ResourceKind;
  gpus: string;
  migProfile: string;
  gpuFraction: string;
}

const num = (s: string) => (s.trim() === '' ? Number.NaN : Number(s));

/** The API's per-replica resources from the form: exactly one of gpus, migProfile or gpuFraction. */
export function toResources(f: ResourceFormState): { gpus?: number; migProfile?: string; gpuFraction?: number; gpuModel?: string } {
  const r = f.kind === 'gpus' ? { gpus: num(f.gpus) } : f.kind === 'mig' ? { migProfile: f.migProfile } : { gpuFraction: num(f.gpuFraction) };
  return f.gpuModel ? { ...r, gpuModel: f.gpuModel } : r;
}

/**
 * GPU model, then whole GPUs, a MIG profile (the catalog's profiles of that model) or a share of
 * one GPU. `models`: the GPU models the cluster has. `errors`: API problems by field
 * (`gpuModel`, `gpus`, `migProfile`, `gpuFraction`, `resources`).
 */
export function GpuResourceFields({
  value,
  onChange,
  models,
  testIdPrefix,
  errors,
}: {
  value: ResourceFormState;
  onChange: (v: ResourceFormState) => void;
  models: readonly string[];
  testIdPrefix: string;
  errors?: Map<string, string[]>;
}) {
  const set = <K extends keyof ResourceFormState>(k: K, v: ResourceFormState[K]) => {
    const next = { ...value, [k]: v };
    // a profile the newly chosen model does not have is replaced by its first one
    const options = migProfileOptions(next.gpuModel, models);
    if (next.kind === 'mig' && !options.some((o) => o.name === next.migProfile)) next.migProfile = options[0]?.name ?? '';
    onChange(next);
  };
  const err = (k: string) =>
    errors?.get(k)?.map((p, i) => (
      <span className="field-error" data-testid="field-error" data-field={k} key={i}>
        {p}
      </span>
    ));
  const profiles = migProfileOptions(value.gpuModel, models);
  return (
    <div className="form-grid">
      <label className="field">
        <span className="field-label">GPU model</span>
        <select data-testid={`${testIdPrefix}-gpu-model`} value={value.gpuModel} onChange={(e) => set('gpuModel', e.target.value)}>
          <option value="">any</option>
          {models.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
        {err('gpuModel')}
      </label>
      <label className="field">
        <span className="field-label">Per replica</span>
        <select data-testid={`${testIdPrefix}-resource-type`} value={value.kind} onChange={(e) => set('kind', e.target.value as ResourceKind)}>
          <option value="gpus">Whole GPUs</option>
          <option value="mig">MIG profile</option>
          <option value="fraction">Fraction of a GPU</option>
        </select>
      </label>
      {value.kind === 'gpus' && (
        <label className="field">
          <span className="field-label">GPUs per replica</span>
          <input data-testid={`${testIdPrefix}-gpus`} type="number" min={1} max={64} value={value.gpus} onChange={(e) => set('gpus', e.target.value)} />
          {err('gpus')}
        </label>
      )}
      {value.kind === 'mig' && (
        <label className="field">
          <span className="field-label">MIG profile</span>
          <select data-testid={`${testIdPrefix}-mig-profile`} value={value.migProfile} onChange={(e) => set('migProfile', e.target.value)}>
            {profiles.length === 0 && <option value="">no MIG-capable model</option>}
            {profiles.map((p) => (
              <option key={p.name} value={p.name}>
                {p.label}
              </option>
            ))}
          </select>
          {err('migProfile')}
        </label>
      )}
      {value.kind === 'fraction' && (
        <label className="field">
          <span className="field-label">Fraction (0-1)</span>
          <input
            data-testid={`${testIdPrefix}-gpu-fraction`}
            type="number"
            min={0.05}
            max={0.95}
            step={0.05}
            value={value.gpuFraction}
            onChange={(e) => set('gpuFraction', e.target.value)}
          />
          {err('gpuFraction')}
        </label>
      )}
      {err('resources')}
    </div>
  );
}
