import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDriver, type DriverConfig } from './create-driver';
import { formatTopologyJson } from './simulated/topology-file';
import { generateTopology } from './simulated/generate-topology';
import type { ClusterDriver } from './types';
import { warmUpClientNode, WARM_UP_TIMEOUT_MS } from './kubernetes/__tests__/warm-up';

const dir = mkdtempSync(join(tmpdir(), 'gantry-driver-'));
let driver: ClusterDriver | undefined;
// The Kubernetes case loads @kubernetes/client-node: more than 15 s on a busy machine, so here.
beforeAll(warmUpClientNode, WARM_UP_TIMEOUT_MS);
afterEach(async () => {
  await driver?.close();
  driver = undefined;
});

describe('createDriver', () => {
  it('builds the simulated demo cluster when no topology file is given', async () => {
    driver = createDriver({ driver: 'simulated' });
    expect(driver.name).toBe('simulated');
    expect((await driver.discover()).nodes).toHaveLength(32);
  });

  it('builds the simulated cluster of a topology file', async () => {
    const file = join(dir, 'tiny.json');
    writeFileSync(file, formatTopologyJson(generateTopology({ spines: 1, leavesPerSpine: 1, nodesPerLeaf: 3, gpusPerNode: 4, models: ['H200-141GB'] })));
    driver = createDriver({ driver: 'simulated', simCluster: file, simSpeed: 60 });
    expect((await driver.discover()).nodes.map((n) => n.name)).toEqual(['h200-s0-l0-n0', 'h200-s0-l0-n1', 'h200-s0-l0-n2']);
  });

  it('builds the Kubernetes driver from a kubeconfig file without calling the cluster', () => {
    const kubeconfig = join(dir, 'kubeconfig.yaml');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{ name: c, cluster: { server: "https://127.0.0.1:1" } }]',
        'users: [{ name: u, user: { token: t } }]',
        'contexts: [{ name: x, context: { cluster: c, user: u } }]',
        'current-context: x',
      ].join('\n'),
    );
    driver = createDriver({ driver: 'kubernetes', kubeconfig });
    expect(driver.name).toBe('kubernetes');
  });

  it('refuses a driver it does not know', () => {
    expect(() => createDriver({ driver: 'slurm' } as unknown as DriverConfig)).toThrow(/unknown cluster driver slurm/);
  });
});
