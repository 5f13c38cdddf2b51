'use client';

import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { GPU_POWER, MIG_MODELS, migProfilesFor, PLANNER_OPENB_TRACES, PLANNER_POLICIES, type PlannerRun, type PlannerRunCreate } from '@gantry/contracts';
import { describeError, isApiError } from '@/lib/api';
import { fillLayout } from '@/lib/planner-mig';
import { plannerKeys } from '@/lib/queries/planner';
import { useClient } from '@/lib/session';

type WorkloadKind = 'history' | 'openb' | 'generator' | 'csv';
type ClusterKind = 'inventory' | 'openb' | 'csv' | 'topology';
type Policy = (typeof PLANNER_POLICIES)[number];

export interface PlannerFormState {
  workload: WorkloadKind;
  days: string;
  trace: (typeof PLANNER_OPENB_TRACES)[number];
  jobs: string;
  meanInterarrival: string;
  meanDuration: string;
  share: string;
  whole: string;
  multi: string;
  workloadCsv: string;
  workloadFile: string;
  cluster: ClusterKind;
  size: string;
  clusterCsv: string;
  clusterFile: string;
  edits: { model: string; count: string }[];
  /** What-if MIG policies: every GPU of the model cut into as many of the profile as fit ('' = MIG off). */
  mig: { model: string; profile: string }[];
  policies: Policy[];
  power: boolean;
  compress: string;
}

export const INITIAL_FORM: PlannerFormState = {
  workload: 'history',
  days: '7',
  trace: 'default',
  jobs: '500',
  meanInterarrival: '30',
  meanDuration: '3600',
  share: '0.7',
  whole: '0.3',
  multi: '0',
  workloadCsv: '',
  workloadFile: '',
  cluster: 'inventory',
  size: '40',
  clusterCsv: '',
  clusterFile: '',
  edits: [],
  mig: [],
  policies: [...PLANNER_POLICIES],
  power: true,
  compress: '1',
};

const WORKLOADS: { value: WorkloadKind; label: string }[] = [
  { value: 'history', label: 'This cluster’s job history' },
  { value: 'openb', label: 'openb trace' },
  { value: 'generator', label: 'Generated' },
  { value: 'csv', label: 'Trace file (openb CSV)' },
];
const CLUSTERS: { value: ClusterKind; label: string }[] = [
  { value: 'inventory', label: 'Live inventory' },
  { value: 'openb', label: 'openb node list' },
  { value: 'csv', label: 'Node list file (openb CSV)' },
  { value: 'topology', label: 'Topology file (JSON)' },
];
const MODELS = Object.keys(GPU_POWER).sort();

/** Numbers are sent as typed; an empty or malformed field is left for the API to reject, naming it. */
const num = (s: string) => (s.trim() === '' ? Number.NaN : Number(s));

export function toPlannerRunCreate(f: PlannerFormState): PlannerRunCreate {
  const workload: PlannerRunCreate['workload'] =
    f.workload === 'history'
      ? { kind: 'history', days: num(f.days) }
      : f.workload === 'openb'
        ? { kind: 'openb', trace: f.trace }
        : f.workload === 'csv'
          ? { kind: 'csv', csv: f.workloadCsv }
          : {
              kind: 'generator',
              jobs: num(f.jobs),
              meanInterarrivalSeconds: num(f.meanInterarrival),
              meanDurationSeconds: num(f.meanDuration),
              mix: { share: num(f.share), whole: num(f.whole), multi: num(f.multi) },
            };
  const cluster: PlannerRunCreate['cluster'] =
    f.cluster === 'inventory'
      ? { kind: 'inventory' }
      : f.cluster === 'csv'
        ? { kind: 'csv', csv: f.clusterCsv }
        : f.cluster === 'topology'
          ? { kind: 'topology', json: f.clusterCsv }
          : f.size.trim() === ''
            ? { kind: 'openb' }
            : { kind: 'openb', size: num(f.size) };
  return {
    workload,
    cluster,
    edits: f.edits.map((e) => ({ model: e.model, count: num(e.count) })),
    mig: f.mig.map((m) => ({ model: m.model, layout: fillLayout(m.model, m.profile) })),
    policies: f.policies,
    ...(f.power ? {} : { power: null }),
    compress: num(f.compress),
  };
}

/** Choose a workload, a cluster, what-if edits and policies; start the run. */
export function PlannerForm({ onStarted }: { onStarted: (run: PlannerRun) => void }) {
  const client = useClient();
  const qc = useQueryClient();
  const [f, setF] = useState<PlannerFormState>(INITIAL_FORM);
  const set = <K extends keyof PlannerFormState>(k: K, v: PlannerFormState[K]) => setF((s) => ({ ...s, [k]: v }));
  const start = useMutation({
    mutationFn: (body: PlannerRunCreate) => client.planner.create(body),
    onSuccess: (run) => {
      void qc.invalidateQueries({ queryKey: plannerKeys.list() });
      onStarted(run);
    },
  });

  const readFile = (file: File | undefined, text: 'workloadCsv' | 'clusterCsv', name: 'workloadFile' | 'clusterFile') => {
    if (!file) return;
    void file.text().then((t) => setF((s) => ({ ...s, [text]: t, [name]: file.name })));
  };
  const togglePolicy = (p: Policy) =>
    set('policies', f.policies.includes(p) ? f.policies.filter((x) => x !== p) : PLANNER_POLICIES.filter((x) => x === p || f.policies.includes(x)));
  const details = start.error && isApiError(start.error) ? (start.error.details ?? []) : [];

  return (
    <form
      className="card pad form section"
      data-testid="planner-form"
      aria-label="What-if run"
      onSubmit={(e) => {
        e.preventDefault();
        start.mutate(toPlannerRunCreate(f));
      }}
    >
      {start.error && (
        <div className="alert alert-error" role="alert" data-testid="planner-error">
          {describeError(start.error)}
          {details.length > 0 && (
            <ul className="error-details">
              {details.map((d, i) => (
                <li key={i} data-testid="planner-error-field" data-field={d.field}>
                  <span className="mono">{d.field}</span> {d.problem}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      <fieldset className="fieldset">
        <legend>Workload</legend>
        <div className="form-grid">
          <label className="field">
            <span className="field-label">Source</span>
            <select data-testid="planner-workload" value={f.workload} onChange={(e) => set('workload', e.target.value as WorkloadKind)}>
              {WORKLOADS.map((w) => (
                <option key={w.value} value={w.value}>
                  {w.label}
                </option>
              ))}
            </select>
          </label>
          {f.workload === 'history' && (
            <label className="field">
              <span className="field-label">Last days</span>
              <input data-testid="planner-days" inputMode="numeric" value={f.days} onChange={(e) => set('days', e.target.value)} />
            </label>
          )}
          {f.workload === 'openb' && (
            <label className="field">
              <span className="field-label">Trace</span>
              <select data-testid="planner-trace" value={f.trace} onChange={(e) => set('trace', e.target.value as PlannerFormState['trace'])}>
                {PLANNER_OPENB_TRACES.map((t) => (
                  <option key={t} value={t}>
                    {t}
                  </option>
                ))}
              </select>
            </label>
          )}
          {f.workload === 'csv' && (
            <label className="field">
              <span className="field-label">Pod list (name, cpu_milli, memory_mib, num_gpu, gpu_milli, creation_time, deletion_time)</span>
              <input
                type="file"
                accept=".csv,text/csv"
                data-testid="planner-workload-file"
                onChange={(e) => readFile(e.target.files?.[0], 'workloadCsv', 'workloadFile')}
              />
            </label>
          )}
          {f.workload === 'generator' && (
            <>
              <NumberField label="Jobs" testId="planner-jobs" value={f.jobs} onChange={(v) => set('jobs', v)} />
              <NumberField
                label="Mean seconds between arrivals"
                testId="planner-interarrival"
                value={f.meanInterarrival}
                onChange={(v) => set('meanInterarrival', v)}
              />
              <NumberField label="Mean run time (s)" testId="planner-duration" value={f.meanDuration} onChange={(v) => set('meanDuration', v)} />
              <NumberField label="Share of GPU-share jobs" testId="planner-mix-share" value={f.share} onChange={(v) => set('share', v)} />
              <NumberField label="Share of 1-GPU jobs" testId="planner-mix-whole" value={f.whole} onChange={(v) => set('whole', v)} />
              <NumberField label="Share of multi-GPU jobs" testId="planner-mix-multi" value={f.multi} onChange={(v) => set('multi', v)} />
            </>
          )}
          <NumberField label="Arrivals faster by" testId="planner-compress" value={f.compress} onChange={(v) => set('compress', v)} />
        </div>
      </fieldset>
      <fieldset className="fieldset">
        <legend>Cluster</legend>
        <div className="form-grid">
          <label className="field">
            <span className="field-label">Nodes</span>
            <select data-testid="planner-cluster" value={f.cluster} onChange={(e) => set('cluster', e.target.value as ClusterKind)}>
              {CLUSTERS.map((c) => (
                <option key={c.value} value={c.value}>
                  {c.label}
                </option>
              ))}
            </select>
          </label>
          {f.cluster === 'openb' && (
            <NumberField label="First nodes (of 1,213; empty: all)" testId="planner-size" value={f.size} onChange={(v) => set('size', v)} />
          )}
          {f.cluster === 'topology' && (
            <label className="field">
              <span className="field-label">Topology (spines, leaves, nodes, GPUs)</span>
              <input
                type="file"
                accept=".json,application/json"
                data-testid="planner-topology-file"
                onChange={(e) => readFile(e.target.files?.[0], 'clusterCsv', 'clusterFile')}
              />
            </label>
          )}
          {f.cluster === 'csv' && (
            <label className="field">
              <span className="field-label">Node list (sn, cpu_milli, memory_mib, gpu, model)</span>
              <input
                type="file"
                accept=".csv,text/csv"
                data-testid="planner-cluster-file"
                onChange={(e) => readFile(e.target.files?.[0], 'clusterCsv', 'clusterFile')}
              />
            </label>
          )}
        </div>
        <div className="planner-edits" data-testid="planner-edits">
          {f.edits.map((e, i) => (
            <div className="planner-edit" key={i} data-testid="planner-edit">
              <label className="field">
                <span className="field-label">GPU model</span>
                <select
                  data-testid="planner-edit-model"
                  value={e.model}
                  onChange={(ev) =>
                    set(
                      'edits',
                      f.edits.map((x, k) => (k === i ? { ...x, model: ev.target.value } : x)),
                    )
                  }
                >
                  {MODELS.map((m) => (
                    <option key={m} value={m}>
                      {m}
                    </option>
                  ))}
                </select>
              </label>
              <NumberField
                label="Nodes to add (negative: remove)"
                testId="planner-edit-count"
                value={e.count}
                onChange={(v) =>
                  set(
                    'edits',
                    f.edits.map((x, k) => (k === i ? { ...x, count: v } : x)),
                  )
                }
              />
              <button
                type="button"
                className="btn btn-sm btn-ghost"
                aria-label={`Remove edit ${i + 1}`}
                onClick={() =>
                  set(
                    'edits',
                    f.edits.filter((_, k) => k !== i),
                  )
                }
              >
                Remove
              </button>
            </div>
          ))}
          <button
            type="button"
            className="btn btn-sm btn-outline"
            data-testid="planner-add-edit"
            onClick={() => set('edits', [...f.edits, { model: MODELS.includes('A100-80GB') ? 'A100-80GB' : MODELS[0]!, count: '1' }])}
          >
            Add a what-if edit
          </button>
          {f.mig.map((m, i) => (
            <div className="planner-edit" key={`mig-${i}`} data-testid="planner-mig">
              <label className="field">
                <span className="field-label">MIG on GPU model</span>
                <select
                  data-testid="planner-mig-model"
                  value={m.model}
                  onChange={(ev) =>
                    set(
                      'mig',
                      f.mig.map((x, k) => (k === i ? { model: ev.target.value, profile: migProfilesFor(ev.target.value)[0]?.name ?? '' } : x)),
                    )
                  }
                >
                  {MIG_MODELS.map((x) => (
                    <option key={x} value={x}>
                      {x}
                    </option>
                  ))}
                </select>
              </label>
              <label className="field">
                <span className="field-label">Every GPU cut into</span>
                <select
                  data-testid="planner-mig-profile"
                  value={m.profile}
                  onChange={(ev) =>
                    set(
                      'mig',
                      f.mig.map((x, k) => (k === i ? { ...x, profile: ev.target.value } : x)),
                    )
                  }
                >
                  <option value="">MIG off (whole GPUs)</option>
                  {migProfilesFor(m.model).map((p) => (
                    <option key={p.name} value={p.name}>
                      {fillLayout(m.model, p.name).length} x {p.name}
                    </option>
                  ))}
                </select>
              </label>
              <button
                type="button"
                className="btn btn-sm btn-ghost"
                aria-label={`Remove MIG policy ${i + 1}`}
                onClick={() =>
                  set(
                    'mig',
                    f.mig.filter((_, k) => k !== i),
                  )
                }
              >
                Remove
              </button>
            </div>
          ))}
          <button
            type="button"
            className="btn btn-sm btn-outline"
            data-testid="planner-add-mig"
            onClick={() => {
              const model = MIG_MODELS.includes('A100-80GB') ? 'A100-80GB' : MIG_MODELS[0]!;
              set('mig', [...f.mig, { model, profile: migProfilesFor(model)[0]?.name ?? '' }]);
            }}
          >
            Add a MIG policy
          </button>
        </div>
      </fieldset>
      <fieldset className="fieldset">
        <legend>Policies</legend>
        <div className="checks planner-checks">
          {PLANNER_POLICIES.map((p) => (
            <label className="check" key={p}>
              <input type="checkbox" data-testid={`planner-policy-${p}`} checked={f.policies.includes(p)} onChange={() => togglePolicy(p)} />
              <span className="mono">{p}</span>
            </label>
          ))}
          <label className="check">
            <input type="checkbox" data-testid="planner-power" checked={f.power} onChange={(e) => set('power', e.target.checked)} />
            Power management (idle nodes off)
          </label>
        </div>
      </fieldset>
      <div className="page-actions">
        <button type="submit" className="btn btn-primary" data-testid="planner-start" disabled={start.isPending}>
          {start.isPending ? 'Starting…' : 'Run plan'}
        </button>
      </div>
    </form>
  );
}

function NumberField({ label, value, onChange, testId }: { label: string; value: string; onChange: (v: string) => void; testId: string }) {
  return (
    <label className="field">
      <span className="field-label">{label}</span>
      <input inputMode="decimal" data-testid={testId} value={value} onChange={(e) => onChange(e.target.value)} />
    </label>
  );
}
