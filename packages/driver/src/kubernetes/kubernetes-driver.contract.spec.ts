/**
 * The ClusterDriver contract against a real kube-apiserver made to look like a GPU cluster by the
 * kube-emulator (kubelet, mig-manager, persona switch). The driver talks with the gantry-driver
 * ServiceAccount's token (deploy/kubernetes RBAC), never as admin. One cluster for the file; each
 * case gets a fresh driver that sees only a node of its own.
 */
import { describeDriverContract } from '../__tests__/driver-contract';
import { KubernetesDriver } from './kubernetes-driver';
import { startEmulatedCluster, type EmulatedCluster } from './__tests__/emulated-cluster';
import { warmUpClientNode } from './__tests__/warm-up';

const CASES = 13;
let cluster: EmulatedCluster;
let slot = 0;

beforeAll(async () => {
  await warmUpClientNode();
  cluster = await startEmulatedCluster({ slots: CASES });
}, 240_000); // a control plane (up to 100 s on a busy machine), the RBAC objects, the emulator's nodes

afterAll(async () => {
  await cluster?.stop();
}, 60_000);

describeDriverContract(
  'kubernetes (real API server + kube-emulator)',
  async () => {
    const nodeLabelSelector = cluster.slotSelector(slot++ % CASES);
    const driver = new KubernetesDriver({ kubeConfig: cluster.driverConfig, nodeLabelSelector, pollSeconds: 0.1, checkpointTimeoutSeconds: 20 });
    // A driver reports the exits of jobs that ended before it listened (a restarted worker must
    // learn them): each case starts from an empty namespace so that it sees only its own.
    return { driver, progressPerSecond: 1, shortJobRealSeconds: 2, waitMs: 30_000, close: () => cluster.removeAllPods() };
  },
  { timeoutMs: 90_000 },
);
