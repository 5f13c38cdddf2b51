'use client';

/** Autoscaling settings of an endpoint as typed in a form (numbers as text until sent). */
export interface EndpointSettingsForm {
  minReplicas: string;
  maxReplicas: string;
  targetConcurrency: string;
  scaleToZeroAfterSeconds: string;
  warmPool: string;
}

export const SETTINGS_FIELDS: { key: keyof EndpointSettingsForm; label: string; min: number; max: number; hint: string }[] = [
  { key: 'minReplicas', label: 'Min replicas', min: 0, max: 64, hint: '0 scales to zero when idle' },
  { key: 'maxReplicas', label: 'Max replicas', min: 1, max: 64, hint: 'the autoscaler never goes above' },
  { key: 'targetConcurrency', label: 'Target concurrency', min: 1, max: 10000, hint: 'in-flight requests per replica' },
  { key: 'scaleToZeroAfterSeconds', label: 'Idle time (s)', min: 1, max: 86400, hint: 'without a request before scaling to zero' },
  { key: 'warmPool', label: 'Warm pool', min: 0, max: 8, hint: 'loaded spare replicas (count against quota)' },
];

const num = (s: string) => (s.trim() === '' ? Number.NaN : Number(s));

export function settingsBody(f: EndpointSettingsForm) {
  return {
    minReplicas: num(f.minReplicas),
    maxReplicas: num(f.maxReplicas),
    targetConcurrency: num(f.targetConcurrency),
    scaleToZeroAfterSeconds: num(f.scaleToZeroAfterSeconds),
    warmPool: num(f.warmPool),
  };
}

export function settingsForm(e: { minReplicas: number; maxReplicas: number; targetConcurrency: number; scaleToZeroAfterSeconds: number; warmPool: number }) {
  return {
    minReplicas: String(e.minReplicas),
    maxReplicas: String(e.maxReplicas),
    targetConcurrency: String(e.targetConcurrency),
    scaleToZeroAfterSeconds: String(e.scaleToZeroAfterSeconds),
    warmPool: String(e.warmPool),
  };
}

/** Min/max replicas, target concurrency, idle time and warm pool, each with the API's problem under it. */
export function EndpointSettingsFields({
  value,
  onChange,
  errors,
  testIdPrefix,
}: {
  value: EndpointSettingsForm;
  onChange: (v: EndpointSettingsForm) => void;
  errors: Map<string, string[]>;
  testIdPrefix: string;
}) {
  return (
    <div className="form-grid">
      {SETTINGS_FIELDS.map((f) => (
        <label className="field" key={f.key}>
          <span className="field-label">{f.label}</span>
          <input
            type="number"
            min={f.min}
            max={f.max}
            data-testid={`${testIdPrefix}-${f.key}`}
            value={value[f.key]}
            aria-invalid={errors.has(f.key) ? true : undefined}
            onChange={(e) => onChange({ ...value, [f.key]: e.target.value })}
          />
          <span className="muted small">{f.hint}</span>
          {errors.get(f.key)?.map((p, i) => (
            <span className="field-error" data-testid="field-error" data-field={f.key} key={i}>
              {p}
            </span>
          ))}
        </label>
      ))}
    </div>
  );
}

/** API error details by form field: `resources.gpus` -> `gpus`, `body.minReplicas` -> `minReplicas`. */
export function errorsByField(details: { field?: string; problem: string }[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const d of details) {
    const path = (d.field ?? '').replace(/^body\./, '');
    const key = path.startsWith('resources.') ? path.slice('resources.'.length) : path;
    if (!key) continue;
    out.set(key, [...(out.get(key) ?? []), d.problem]);
  }
  return out;
}
