/**
 * A real API server made to look like a GPU cluster (test helper): the control plane and the
 * driver's ServiceAccount of real-cluster.ts, and the kube-emulator (its own process, as admin)
 * playing the nodes, kubelet, mig-manager and persona switch for a topology of `slots` identical
 * nodes. Each node carries the label `gantry.io/test-slot=slot-<i>`, so that a test can give its
 * driver a node of its own (`nodeLabelSelector`) on the one shared cluster: starting a control
 * plane takes seconds (a minute on a busy machine), a driver takes none.
 */
import type { Topology } from '../../index';
import { startEmulatorProcess, type EmulatorProcess } from './emulator-process';
import { startRealCluster, WORKLOAD_NAMESPACE, type RealCluster } from './real-cluster';
import { waitFor } from './wait-for';

export const TEST_SLOT_LABEL = 'gantry.io/test-slot';

export interface EmulatedCluster extends RealCluster {
  emulator: EmulatorProcess;
  /** The label selector of slot `i`'s node. */
  slotSelector(i: number): string;
  /** The name of slot `i`'s node. */
  slotNode(i: number): string;
  /** Deletes every pod of the workload namespace at once (grace 0) and waits until they are gone. */
  removeAllPods(): Promise<void>;
}

/** Emulator delays for tests (real seconds): short, but long enough to be seen in between. */
export const TEST_EMULATOR_DELAYS = { startSeconds: 0.2, sigtermSeconds: 0.5, migApplySeconds: 0.3, personaSwitchSeconds: 0.5 };

export async function startEmulatedCluster(options: { slots: number; gpusPerNode?: number }): Promise<EmulatedCluster> {
  const cluster = await startRealCluster();
  try {
    const emulator = await startEmulatorProcess({
      kubeconfigPath: cluster.cp.kubeconfigPath,
      topology: slotTopology(options.slots, options.gpusPerNode ?? 4),
      delays: TEST_EMULATOR_DELAYS,
    });
    return {
      ...cluster,
      emulator,
      slotSelector: (i) => `${TEST_SLOT_LABEL}=slot-${i}`,
      slotNode: (i) => `gpu-node-${i}`,
      removeAllPods: async () => {
        const { core } = cluster.admin;
        await core.deleteCollectionNamespacedPod({ namespace: WORKLOAD_NAMESPACE, gracePeriodSeconds: 0 });
        await waitFor('the workload pods to be gone', async () => (await core.listNamespacedPod({ namespace: WORKLOAD_NAMESPACE })).items.length === 0, 30_000);
      },
      stop: async () => {
        await emulator.stop();
        await cluster.stop();
      },
    };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

/** One spine, one leaf, `slots` H100 nodes. */
export function slotTopology(slots: number, gpusPerNode: number): Topology {
  return {
    name: 'test-slots',
    spines: [
      {
        name: 'spine-t',
        leaves: [
          {
            name: 'leaf-t',
            nodes: Array.from({ length: slots }, (_, i) => ({
              name: `gpu-node-${i}`,
              cpuMilli: 128_000,
              memoryMiB: 1_048_576,
              labels: { [TEST_SLOT_LABEL]: `slot-${i}` },
              gpus: Array.from({ length: gpusPerNode }, () => ({ model: 'H100-80GB', memoryMiB: 81_559, nvlinkDomain: 0 })),
            })),
          },
        ],
      },
    ],
  };
}
