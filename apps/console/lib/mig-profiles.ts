import { migProfilesFor } from '@gantry/contracts';

export interface MigProfileOption {
  /** Profile name as the API takes it, e.g. "3g.40gb". */
  name: string;
  /** "3g.40gb · 3/7 compute, 40 GB · H100-80GB, A100-80GB" */
  label: string;
}

/**
 * The MIG profiles a request may name, from the GPU catalog: those of `model` when one is
 * chosen, else those of the cluster's models (each name once, with the models that have it).
 */
export function migProfileOptions(model: string, clusterModels: readonly string[]): MigProfileOption[] {
  const models = model ? [model] : clusterModels;
  const byName = new Map<string, { compute: number; memoryGB: number; models: string[] }>();
  for (const m of models) {
    for (const p of migProfilesFor(m)) {
      const e = byName.get(p.name) ?? { compute: p.compute, memoryGB: p.memoryGB, models: [] };
      e.models.push(m);
      byName.set(p.name, e);
    }
  }
  return [...byName.entries()].map(([name, e]) => ({
    name,
    label: `${name} · ${e.compute}/7 compute, ${e.memoryGB} GB${model ? '' : ` · ${e.models.join(', ')}`}`,
  }));
}
