/**
 * The objects of the kustomize base deploy/kubernetes, read the way kustomize reads a plain base
 * (its `resources` files, no transformers), so tests can send them to a real API server without
 * kubectl. A kustomization using anything else fails here, loudly.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { loadClientNode } from '../kube-api';

export const DEPLOY_DIR = join(__dirname, '..', '..', '..', '..', '..', 'deploy', 'kubernetes');

export interface ManifestObject extends KubernetesObject {
  /** The file it came from. */
  file: string;
}

export function loadKustomization(dir = DEPLOY_DIR): ManifestObject[] {
  const { loadYaml, loadAllYaml } = loadClientNode();
  const kustomization = loadYaml<Record<string, unknown>>(readFileSync(join(dir, 'kustomization.yaml'), 'utf8'));
  const unsupported = Object.keys(kustomization).filter((k) => !['apiVersion', 'kind', 'resources'].includes(k));
  if (unsupported.length) throw new Error(`kustomization.yaml uses ${unsupported.join(', ')}: the test reads plain resources only`);
  const files = kustomization.resources as string[];
  return files.flatMap((file) =>
    loadAllYaml(readFileSync(join(dir, file), 'utf8'))
      .filter((o): o is KubernetesObject => typeof o === 'object' && o !== null)
      .map((o) => ({ ...o, file })),
  );
}

/** The objects of one file, without the `file` field (as the API wants them). */
export function objectsOf(file: string, dir = DEPLOY_DIR): KubernetesObject[] {
  return loadKustomization(dir)
    .filter((o) => o.file === file)
    .map(({ file: _file, ...object }) => object);
}
