import type { GantryClient } from '../api';
import type { MigLayoutEntry, Persona } from '@gantry/contracts';

export type NodeAction = 'cordon' | 'uncordon' | 'drain';

/** Operator actions on a node (cluster:admin): the API answers at once, progress shows on the node. */
export function runNodeAction(client: GantryClient, nodeId: string, action: NodeAction) {
  switch (action) {
    case 'cordon':
      return client.nodes.cordon(nodeId, 'from the console');
    case 'uncordon':
      return client.nodes.uncordon(nodeId);
    case 'drain':
      return client.nodes.drain(nodeId, 'from the console');
  }
}

export const switchPersona = (client: GantryClient, nodeId: string, persona: Persona) => client.nodes.setPersona(nodeId, persona);

export const setMigLayout = (client: GantryClient, gpuId: string, layout: MigLayoutEntry[]) => client.gpus.setMig(gpuId, layout);

/** Layouts an operator picks from (NVIDIA's usual configs), per GPU model: name -> slices. */
export function migPresets(model: string): { name: string; layout: MigLayoutEntry[] }[] {
  const p = MIG_NAMES[model];
  if (!p) return [];
  const [g1, , g1x2, g2, g3, g4, g7] = p;
  return [
    { name: 'MIG off (whole GPU)', layout: [] },
    { name: `7 x ${g1}`, layout: [0, 1, 2, 3, 4, 5, 6].map((start) => ({ profile: g1!, start })) },
    { name: `balanced: 2 x ${g1} + ${g2} + ${g3}`, layout: [{ profile: g3!, start: 4 }, { profile: g2!, start: 2 }, { profile: g1!, start: 0 }, { profile: g1!, start: 1 }] },
    { name: `2 x ${g3}`, layout: [{ profile: g3!, start: 0 }, { profile: g3!, start: 4 }] },
    { name: `${g4} + ${g3}`, layout: [{ profile: g4!, start: 0 }, { profile: g3!, start: 4 }] },
    { name: `4 x ${g1x2}`, layout: [0, 2, 4, 6].map((start) => ({ profile: g1x2!, start })) },
    { name: `1 x ${g7}`, layout: [{ profile: g7!, start: 0 }] },
  ];
}

/** Profile names per model in NVIDIA's row order: 1g, 1g+me, 1g 2-slot, 2g, 3g, 4g, 7g. */
export const MIG_NAMES: Record<string, string[]> = {
  'A100-40GB': ['1g.5gb', '1g.5gb+me', '1g.10gb', '2g.10gb', '3g.20gb', '4g.20gb', '7g.40gb'],
  'A100-80GB': ['1g.10gb', '1g.10gb+me', '1g.20gb', '2g.20gb', '3g.40gb', '4g.40gb', '7g.80gb'],
  'H100-80GB': ['1g.10gb', '1g.10gb+me', '1g.20gb', '2g.20gb', '3g.40gb', '4g.40gb', '7g.80gb'],
  'H200-141GB': ['1g.18gb', '1g.18gb+me', '1g.35gb', '2g.35gb', '3g.71gb', '4g.71gb', '7g.141gb'],
};
