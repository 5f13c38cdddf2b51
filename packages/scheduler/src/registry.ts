/**
 * The built-in plugins by name (what profiles refer to). Plugins live in plugins/, one file per
 * family; this registry is the only file that imports them all.
 */
import { type PluginFactory, Registry } from './framework';
import { cpuStrandScore } from './plugins/cpu-strand';
import { gpuCapacity, gpuModel, nodeReady, nodeResources, persona, requestCheck } from './plugins/filters';
import { bestFitScore, packingScore, spreadScore } from './plugins/fit';
import { fgdScore, fragmentationScore } from './plugins/fragmentation';
import { gangPermit, teamUsage } from './plugins/reserve-permit';
import { nvlinkScore } from './plugins/topology';

const BUILTIN: Record<string, PluginFactory> = {
  request: (e) => requestCheck(e),
  'node-ready': () => nodeReady,
  persona: () => persona,
  'node-resources': () => nodeResources,
  'gpu-model': () => gpuModel,
  'gpu-capacity': (e) => gpuCapacity(e),
  fragmentation: (e, a) => fragmentationScore(e, a),
  fgd: (e, a) => fgdScore(e, a),
  'best-fit': (e, a) => bestFitScore(e, a),
  packing: (_e, a) => packingScore(a),
  'cpu-strand': (e, a) => cpuStrandScore(e, a),
  spread: () => spreadScore(),
  nvlink: () => nvlinkScore(),
  'team-usage': (e) => teamUsage(e),
  gang: (e) => gangPermit(e),
};

export function defaultPluginRegistry(): Registry<PluginFactory> {
  const r = new Registry<PluginFactory>('plugin');
  for (const [name, f] of Object.entries(BUILTIN)) r.register(name, f);
  return r;
}
