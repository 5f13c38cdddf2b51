'use client';

import { useEffect, useMemo, useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { migProfilesFor, partitionGeometry, type Gpu, type MigLayoutEntry, type NodeDetail } from '@gantry/contracts';
import { describeError } from '@/lib/api';
import { checkMigDraft, describeCapacity, sliceAt } from '@/lib/mig-draft';
import { nodeKeys } from '@/lib/queries/nodes';
import { migPresets, setMigLayout } from '@/lib/queries/node-actions';
import { useClient } from '@/lib/session';
import { MigLayout } from './mig-layout';
import { PartitionModePicker } from './partition-mode-picker';
import './mig-layout-editor.css';

/** Per GPU: open the layout editor (operators), or say why the GPU cannot be partitioned now. */
export function MigEditorButton({ gpu, node }: { gpu: Gpu; node: NodeDetail }) {
  const [open, setOpen] = useState(false);
  if (!migProfilesFor(gpu.model).length) return <span className="muted small">not MIG-capable</span>;
  if (node.persona === 'vm-passthrough') return <span className="muted small">VM persona: whole GPUs</span>;
  if (node.state === 'switching' || node.state === 'down') return <span className="muted small">node {node.state}</span>;
  return (
    <>
      <button
        type="button"
        className="btn btn-sm btn-outline"
        data-testid="mig-edit"
        disabled={!!gpu.migTarget}
        title={gpu.migTarget ? 'a change is being applied' : undefined}
        onClick={() => setOpen(true)}
      >
        {gpu.migTarget ? 'Applying…' : partitionGeometry(gpu.model)?.scheme === 'modes' ? 'Change mode' : 'Edit layout'}
      </button>
      {open && <MigLayoutEditor gpu={gpu} node={node} onClose={() => setOpen(false)} />}
    </>
  );
}

const sized = (model: string, layout: readonly MigLayoutEntry[]) =>
  layout.map((e) => ({ ...e, size: migProfilesFor(model).find((p) => p.name === e.profile)?.size ?? 1 }));

/**
 * Place MIG profiles on a GPU's 8 memory slots (7 compute slices): every change is checked at
 * once with the scheduler's own rules (the names the API answers with), the capacity before and
 * after is shown, and Apply sends the whole layout (202: the GPU leaves scheduling until applied).
 */
export function MigLayoutEditor({ gpu, node, onClose }: { gpu: Gpu; node: NodeDetail; onClose: () => void }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const profiles = migProfilesFor(gpu.model);
  const current = useMemo(() => (gpu.mode === 'mig' ? (gpu.mig?.layout ?? []).map((s) => ({ profile: s.profile, start: s.start })) : []), [gpu]);
  const [draft, setDraft] = useState<MigLayoutEntry[]>(current);
  const [profile, setProfile] = useState(profiles.find((p) => p.class === '1g')?.name ?? profiles[0]!.name);
  const check = checkMigDraft(gpu, draft);
  const geometry = partitionGeometry(gpu.model)!;
  const byMode = geometry.scheme === 'modes';
  const computeSlices = geometry.computeSlices;
  const memorySlots = geometry.memorySlots;
  const apply = useMutation({
    mutationFn: () => setMigLayout(client, gpu.id, draft),
    onSuccess: () => onClose(),
    onSettled: () => queryClient.invalidateQueries({ queryKey: nodeKeys.all }),
  });

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && onClose();
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);

  const clickSlot = (slot: number) => {
    const at = sliceAt(gpu.model, draft, slot);
    if (at >= 0) setDraft(draft.filter((_, i) => i !== at));
    else setDraft([...draft, { profile, start: slot }]);
  };
  const preview: Gpu = { ...gpu, mode: 'mig', mig: { layout: sized(gpu.model, draft) }, migTarget: undefined };
  const v = check.validation;

  return (
    <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div
        className="modal mig-editor-modal"
        role="dialog"
        aria-modal="true"
        aria-labelledby="mig-editor-title"
        data-testid="mig-editor"
        data-gpu-index={gpu.index}
      >
        <div className="modal-head">
          <h2 id="mig-editor-title">
            {byMode ? 'Partition mode' : 'MIG layout'} · {node.name} GPU {gpu.index} · {gpu.model}
          </h2>
          <button type="button" className="btn-close" aria-label="Close" onClick={onClose}>
            ×
          </button>
        </div>
        <div className="form">
          {byMode ? (
            <>
              <PartitionModePicker model={gpu.model} draft={draft} onChange={setDraft} />
              <div className="mig-editor-preview" data-testid="mig-draft">
                <MigLayout gpu={preview} />
              </div>
              <div className="mig-editor-tools">
                <button type="button" className="btn btn-sm btn-ghost" data-testid="mig-reset" onClick={() => setDraft(current)}>
                  current mode
                </button>
              </div>
            </>
          ) : (
            <>
              <fieldset className="fieldset">
                <legend>1. Choose a profile</legend>
                <div className="mig-palette" role="radiogroup" aria-label="MIG profile to place">
                  {profiles.map((p) => (
                    <label key={p.name} className={`mig-palette-item${p.name === profile ? ' is-selected' : ''}`}>
                      <input
                        type="radio"
                        name="mig-profile"
                        value={p.name}
                        checked={p.name === profile}
                        onChange={() => setProfile(p.name)}
                        data-testid="mig-palette-profile"
                      />
                      <span className="mono">{p.name}</span>
                      <span className="muted small">
                        {p.compute}/{computeSlices} SM · {p.size}/{memorySlots} mem · starts {p.starts.join(', ')} · max {p.maxPerGpu}
                      </span>
                    </label>
                  ))}
                </div>
              </fieldset>
              <fieldset className="fieldset">
                <legend>2. Place it on a memory slot (click a placed slice to remove it)</legend>
                <div className="mig-slot-buttons" data-testid="mig-slot-buttons">
                  {Array.from({ length: memorySlots }, (_, slot) => {
                    const at = sliceAt(gpu.model, draft, slot);
                    const holder = at >= 0 ? draft[at] : undefined;
                    return (
                      <button
                        key={slot}
                        type="button"
                        className={`mig-slot-button${holder ? ' is-taken' : ''}`}
                        data-testid="mig-slot-button"
                        data-slot={slot}
                        data-holder={holder ? `${holder.profile}@${holder.start}` : ''}
                        aria-label={holder ? `memory slot ${slot}: ${holder.profile} at ${holder.start}, remove it` : `place ${profile} at memory slot ${slot}`}
                        onClick={() => clickSlot(slot)}
                      >
                        <span className="mono small">{slot}</span>
                        <span className="mono small">{holder ? holder.profile.split('.')[0] : '+'}</span>
                      </button>
                    );
                  })}
                </div>
                <div className="mig-editor-preview" data-testid="mig-draft">
                  <MigLayout gpu={preview} />
                </div>
                <div className="mig-editor-tools">
                  <span className="muted small">Start from:</span>
                  {migPresets(gpu.model).map((p) => (
                    <button key={p.name} type="button" className="btn btn-sm btn-ghost" onClick={() => setDraft(p.layout)}>
                      {p.name}
                    </button>
                  ))}
                  <button type="button" className="btn btn-sm btn-ghost" data-testid="mig-reset" onClick={() => setDraft(current)}>
                    current layout
                  </button>
                </div>
              </fieldset>
            </>
          )}
          <div
            className={`alert ${v.ok ? 'alert-ok' : 'alert-error'} small`}
            role="status"
            data-testid="mig-validation"
            data-valid={v.ok}
            data-rule={v.ok ? '' : v.rule}
          >
            {v.ok
              ? draft.length
                ? 'Valid layout.'
                : byMode
                  ? 'No partitions: the GPU runs whole (SPX).'
                  : 'No slice: the GPU runs whole (MIG off).'
              : `Rule ${v.rule}: ${v.message}`}
          </div>
          <div className="mig-capacity" data-testid="mig-capacity">
            <div>
              <div className="muted small">Now</div>
              <div className="mono" data-testid="mig-capacity-before">
                {describeCapacity(check.before)}
              </div>
              <div className="muted small">
                {check.before.compute}/{computeSlices} compute · {check.before.memorySlots}/{memorySlots} memory partitioned
              </div>
            </div>
            <div aria-hidden="true">→</div>
            <div>
              <div className="muted small">After</div>
              <div className="mono" data-testid="mig-capacity-after">
                {describeCapacity(check.after)}
              </div>
              <div className="muted small">
                {check.after.compute}/{computeSlices} compute · {check.after.memorySlots}/{memorySlots} memory partitioned
                {draft.length > 0 && check.after.compute < computeSlices ? ` · ${computeSlices - check.after.compute} compute left unused` : ''}
              </div>
            </div>
          </div>
          {check.busyRemoved.length > 0 && (
            <div className="alert alert-warn small" data-testid="mig-busy-warning">
              {check.busyRemoved.length} slice(s) in use go away ({check.busyRemoved.map((b) => `${b.profile} by job ${b.jobId}`).join(', ')}): the change waits
              until those jobs end, and the GPU takes no new work meanwhile.
            </div>
          )}
          {apply.isError && (
            <div className="alert alert-error small" role="alert" data-testid="mig-error">
              {describeError(apply.error)}
            </div>
          )}
          <div className="modal-foot">
            <span className="muted small">Sent as PUT /v1/gpus/{gpu.id}/mig; the GPU leaves scheduling until the layout is applied.</span>
            <button type="button" className="btn" onClick={onClose}>
              Close
            </button>
            <button
              type="button"
              className="btn btn-primary"
              data-testid="mig-apply"
              disabled={!v.ok || check.unchanged || apply.isPending}
              onClick={() => apply.mutate()}
            >
              {apply.isPending ? 'Applying…' : check.unchanged ? 'No change' : 'Apply layout'}
            </button>
          </div>
        </div>
      </div>
    </div>
  );
}
