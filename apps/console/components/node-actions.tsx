'use client';

import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { PERSONAS, type Node, type Persona } from '@gantry/contracts';
import { describeError } from '@/lib/api';
import { nodeKeys } from '@/lib/queries/nodes';
import { runNodeAction, setNodePower, switchPersona, type NodeAction } from '@/lib/queries/node-actions';
import { useClient } from '@/lib/session';
import { ConfirmDialog } from './modal';

const LABEL: Record<NodeAction, { verb: string; doing: string; className: string }> = {
  cordon: { verb: 'Cordon', doing: 'Cordoning…', className: 'btn-outline' },
  drain: { verb: 'Drain', doing: 'Draining…', className: 'btn-danger-outline' },
  uncordon: { verb: 'Uncordon', doing: 'Uncordoning…', className: 'btn-primary' },
};

/** What an action does to the node's work, said before it is done (uncordon only gives capacity back). */
function consequence(a: NodeAction | 'persona' | 'power', node: Node, persona: Persona): string | null {
  const held = node.gpusAllocated > 0 ? `the work on its ${node.gpusAllocated} allocated GPU(s)` : 'no work (no GPU is allocated)';
  switch (a) {
    case 'cordon':
      return `No new work will be placed on ${node.name}. What runs there now keeps running; uncordon to take work again.`;
    case 'drain':
      return `${node.name} stops taking work and ${held} is moved: suspendable jobs are checkpointed and requeued, the others restarted elsewhere.`;
    case 'persona':
      return `${node.name} is drained (${held} moves), its GPU stack reconfigured as ${persona} (minutes), then it takes work again.`;
    case 'uncordon':
      return null;
    case 'power':
      return node.powerState === 'off'
        ? `${node.name} boots (minutes); it takes work once it is up. Power management may power it down again once it has been empty for its idle time.`
        : node.gpusAllocated > 0
          ? `${node.name} holds ${held}: it cannot power off until it is drained.`
          : `${node.name} is cordoned and powered off; it takes no work until it is powered on again (by hand, or by power management for queued demand).`;
  }
}

/** What the node's state allows: cordon and drain a ready node, uncordon a cordoned one. */
export function nodeActionsFor(node: Pick<Node, 'state'>): NodeAction[] {
  if (node.state === 'ready') return ['cordon', 'drain'];
  if (node.state === 'cordoned') return ['uncordon', 'drain'];
  return [];
}

/** Cordon / drain / uncordon and the persona switch of a node (operators with cluster:admin). */
export function NodeActions({ node }: { node: Node }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const [persona, setPersona] = useState<Persona>(node.persona);
  const refresh = () => queryClient.invalidateQueries({ queryKey: nodeKeys.all });
  const action = useMutation({ mutationFn: (a: NodeAction) => runNodeAction(client, node.id, a), onSettled: refresh });
  const swap = useMutation({ mutationFn: (p: Persona) => switchPersona(client, node.id, p), onSettled: refresh });
  const power = useMutation({ mutationFn: (state: 'on' | 'off') => setNodePower(client, node.id, state), onSettled: refresh });
  const busy = action.isPending || swap.isPending || power.isPending;
  const powerTo = node.powerState === 'off' ? 'on' : node.powerState === 'on' ? 'off' : null;
  const canSwitch = node.state === 'ready' || node.state === 'cordoned';
  const [asking, setAsking] = useState<NodeAction | 'persona' | 'power' | null>(null);
  const run = (a: NodeAction | 'persona' | 'power') =>
    a === 'persona' ? swap.mutate(persona) : a === 'power' ? powerTo && power.mutate(powerTo) : action.mutate(a);
  const ask = (a: NodeAction | 'persona' | 'power') => (consequence(a, node, persona) === null ? run(a) : setAsking(a));
  const title = (a: NodeAction | 'persona' | 'power') =>
    a === 'persona' ? `Switch ${node.name} to ${persona}?` : a === 'power' ? `Power ${node.name} ${powerTo}?` : `${LABEL[a].verb} ${node.name}?`;
  const confirmLabel = (a: NodeAction | 'persona' | 'power') => (a === 'persona' ? 'Switch persona' : a === 'power' ? `Power ${powerTo}` : LABEL[a].verb);
  return (
    <div className="node-actions" data-testid="node-actions">
      {nodeActionsFor(node).map((a) => (
        <button key={a} type="button" className={`btn btn-sm ${LABEL[a].className}`} data-testid={`node-${a}`} disabled={busy} onClick={() => ask(a)}>
          {action.isPending && action.variables === a ? LABEL[a].doing : LABEL[a].verb}
        </button>
      ))}
      {powerTo && (
        <button
          type="button"
          className={`btn btn-sm ${powerTo === 'on' ? 'btn-primary' : 'btn-danger-outline'}`}
          data-testid="node-power-toggle"
          disabled={busy}
          onClick={() => ask('power')}
          title={powerTo === 'on' ? 'Boot the node (minutes)' : 'Power the node off (refused while it holds work)'}
        >
          {power.isPending ? 'Powering…' : `Power ${powerTo}`}
        </button>
      )}
      {asking && (
        <ConfirmDialog
          title={title(asking)}
          confirmLabel={confirmLabel(asking)}
          tone={asking === 'cordon' || (asking === 'power' && powerTo === 'on') ? 'primary' : 'danger'}
          onCancel={() => setAsking(null)}
          onConfirm={() => {
            run(asking);
            setAsking(null);
          }}
        >
          {consequence(asking, node, persona)}
        </ConfirmDialog>
      )}
      <span className="persona-switch">
        <select
          className="select-sm"
          aria-label="Persona"
          data-testid="node-persona-select"
          value={persona}
          disabled={!canSwitch || busy}
          onChange={(e) => setPersona(e.target.value as Persona)}
        >
          {PERSONAS.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
        <button
          type="button"
          className="btn btn-sm btn-outline"
          data-testid="node-persona-switch"
          disabled={!canSwitch || busy || persona === node.persona}
          onClick={() => ask('persona')}
          title="Drain the node, reconfigure its GPU stack (minutes), then take work again"
        >
          {swap.isPending ? 'Switching…' : 'Switch persona'}
        </button>
      </span>
      {(action.isError || swap.isError || power.isError) && (
        <span className="form-error small" role="alert" data-testid="node-action-error">
          {describeError(action.error ?? swap.error ?? power.error)}
        </span>
      )}
    </div>
  );
}
