import type { GantryClient } from '../api';
import { migProfileOfClass, type MigClass, type MigLayoutEntry, type Persona } from '@gantry/contracts';

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

/** Power a node on or off by hand (off is refused with 409 while it holds work). */
export const setNodePower = (client: GantryClient, nodeId: string, state: 'on' | 'off') => client.nodes.setPower(nodeId, state, 'from the console');

export const switchPersona = (client: GantryClient, nodeId: string, persona: Persona) => client.nodes.setPersona(nodeId, persona);

export const setMigLayout = (client: GantryClient, gpuId: string, layout: MigLayoutEntry[]) => client.gpus.setMig(gpuId, layout);

/** Layouts an operator picks from (NVIDIA's usual configs), per GPU model: name -> slices. */
export function migPresets(model: string): { name: string; layout: MigLayoutEntry[] }[] {
  const of = (cls: MigClass) => migProfileOfClass(model, cls);
  const [p1, p1x2] = [of('1g'), of('1g.2mem')];
  if (!p1 || !p1x2) return [];
  const [g1, g1x2, g2, g3, g4, g7] = [p1.name, p1x2.name, of('2g')?.name, of('3g')?.name, of('4g')?.name, of('7g')?.name];
  return [
    { name: 'MIG off (whole GPU)', layout: [] },
    { name: `7 x ${g1}`, layout: p1.starts.map((start) => ({ profile: g1, start })) },
    {
      name: `balanced: 2 x ${g1} + ${g2} + ${g3}`,
      layout: [
        { profile: g3!, start: 4 },
        { profile: g2!, start: 2 },
        { profile: g1!, start: 0 },
        { profile: g1!, start: 1 },
      ],
    },
    {
      name: `2 x ${g3}`,
      layout: [
        { profile: g3!, start: 0 },
        { profile: g3!, start: 4 },
      ],
    },
    {
      name: `${g4} + ${g3}`,
      layout: [
        { profile: g4!, start: 0 },
        { profile: g3!, start: 4 },
      ],
    },
    { name: `4 x ${g1x2}`, layout: p1x2.starts.map((start) => ({ profile: g1x2, start })) },
    { name: `1 x ${g7}`, layout: [{ profile: g7!, start: 0 }] },
  ];
}
