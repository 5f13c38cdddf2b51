'use client';

import type { Node } from '@gantry/contracts';
import { useNow } from '@/lib/use-now';

/** A drain or persona switch in progress: a bar with its progress, the jobs left and the ETA. */
export function NodeTransition({ node, compact = false }: { node: Pick<Node, 'transition' | 'stateReason'>; compact?: boolean }) {
  const now = useNow(1000);
  const t = node.transition;
  if (!t) return null;
  // progress moves with the clock between polls
  let progress = t.progress;
  if (t.kind === 'persona-switch' && t.etaAt) {
    const start = Date.parse(t.startedAt);
    const total = Date.parse(t.etaAt) - start;
    progress = total > 0 ? Math.min(0.99, Math.max(progress, (now - start) / total)) : progress;
  }
  const left = t.etaAt ? Math.max(0, Math.round((Date.parse(t.etaAt) - now) / 1000)) : null;
  const label =
    t.kind === 'persona-switch'
      ? `switching to ${t.persona ?? '?'}${t.jobsLeft ? ` · draining ${t.jobsLeft} job(s)` : ''}`
      : `draining · ${t.jobsLeft ?? 0} job(s) left`;
  return (
    <div className={`transition${compact ? ' transition-compact' : ''}`} data-testid="node-transition" data-kind={t.kind} title={node.stateReason ?? undefined}>
      <div className="bar bar-sm">
        <span className="bar-seg bar-alloc" style={{ width: `${Math.round(progress * 100)}%` }} />
      </div>
      {!compact && (
        <span className="small mono">
          {label} · {Math.round(progress * 100)}%{left !== null ? ` · ETA ${left < 60 ? `${left} s` : `${Math.ceil(left / 60)} min`}` : ''}
        </span>
      )}
    </div>
  );
}
