'use client';

import { partitionGeometry, partitionModeLayout, partitionModeOf, type MigLayoutEntry } from '@gantry/contracts';

/**
 * A GPU split by whole modes (AMD Instinct: compute partition mode x memory partition mode)
 * takes a mode, not slices placed one by one: pick the compute and memory modes, the draft is
 * every partition of that pair. Pairs the catalog's rules refuse are shown with the reason.
 */
export function PartitionModePicker({
  model,
  draft,
  onChange,
}: {
  model: string;
  draft: readonly MigLayoutEntry[];
  onChange: (layout: MigLayoutEntry[]) => void;
}) {
  const g = partitionGeometry(model);
  if (!g || g.scheme !== 'modes') return null;
  const now = partitionModeOf(model, draft) ?? { computeMode: '', memoryMode: '' };
  const pick = (computeMode: string, memoryMode: string) => {
    const r = partitionModeLayout(model, computeMode, memoryMode);
    if (r.ok) onChange(r.layout);
  };
  // why the catalog refuses a memory mode with the chosen compute mode (undefined: allowed)
  const refusal = (memoryMode: string) => {
    const check = now.computeMode ? partitionModeLayout(model, now.computeMode, memoryMode) : undefined;
    return check && !check.ok ? check.message : undefined;
  };
  // a compute mode the chosen memory mode refuses moves to the first memory mode that allows it
  const pickCompute = (computeMode: string) => {
    const memory = partitionModeLayout(model, computeMode, now.memoryMode).ok
      ? now.memoryMode
      : g.memoryModes!.find((m) => m.computeModes.includes(computeMode))!.name;
    pick(computeMode, memory);
  };
  return (
    <fieldset className="fieldset" data-testid="partition-modes">
      <legend>Partition mode ({g.computeSlices} XCDs)</legend>
      <div className="mig-palette" role="radiogroup" aria-label="compute partition mode">
        {g.computeModes!.map((m) => {
          const p = g.profiles.find((x) => x.computeMode === m.name);
          return (
            <label key={m.name} className={`mig-palette-item${m.name === now.computeMode ? ' is-selected' : ''}`}>
              <input
                type="radio"
                name="compute-mode"
                value={m.name}
                checked={m.name === now.computeMode}
                onChange={() => pickCompute(m.name)}
                data-testid="compute-mode"
              />
              <span className="mono">{m.name}</span>
              <span className="muted small">
                {m.partitions === 1 ? 'whole GPU' : `${m.partitions} partitions`} · {g.computeSlices / m.partitions} XCD
                {p ? ` · ${p.memoryGB} GB each` : ''}
              </span>
            </label>
          );
        })}
      </div>
      <div className="mig-palette" role="radiogroup" aria-label="memory partition mode">
        {g.memoryModes!.map((m) => {
          const refused = refusal(m.name);
          return (
            <label key={m.name} className={`mig-palette-item${m.name === now.memoryMode ? ' is-selected' : ''}`} title={refused}>
              <input
                type="radio"
                name="memory-mode"
                value={m.name}
                checked={m.name === now.memoryMode}
                disabled={!!refused}
                onChange={() => pick(now.computeMode, m.name)}
                data-testid="memory-mode"
              />
              <span className="mono">{m.name}</span>
              <span className="muted small">
                {m.numaDomains} memory partition{m.numaDomains > 1 ? 's' : ''} · with {m.computeModes.join(', ')}
              </span>
            </label>
          );
        })}
      </div>
      {g.memoryModes!.map((m) =>
        refusal(m.name) ? (
          <p key={m.name} className="muted small" data-testid="memory-mode-refused" data-mode={m.name}>
            {m.name} is not offered: {refusal(m.name)}
          </p>
        ) : null,
      )}
    </fieldset>
  );
}
