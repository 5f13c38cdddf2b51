/** Chooses the ClusterDriver from configuration (GANTRY_DRIVER, GANTRY_SIM_CLUSTER...). */
import { KubernetesDriver } from './kubernetes/kubernetes-driver';
import type { PowerHook } from './kubernetes/power-hook';
import { demoTopology } from './simulated/generate-topology';
import { SimulatedDriver, type SimulatedDelays } from './simulated/simulated-driver';
import { loadTopologyFile } from './simulated/topology-file';
import { RemoteDriver } from './remote/remote-driver';
import type { BareMetalHook } from './kubernetes/bare-metal-hook';
import type { ClusterDriver } from './types';

export interface DriverConfig {
  driver: 'simulated' | 'kubernetes' | 'remote';
  /** Topology file of the simulated cluster; default: the demo cluster. */
  simCluster?: string;
  /** Simulated seconds per real second; default 1. */
  simSpeed?: number;
  /** Heartbeat events from the simulated cluster; default true (the product watches them). */
  simHeartbeats?: boolean;
  /** Simulated delays to override (seconds of simulated time; 0 = next tick). */
  simDelays?: Partial<SimulatedDelays>;
  /** kubeconfig path; default: KUBECONFIG, in-cluster service account, ~/.kube/config. */
  kubeconfig?: string;
  /** Namespace of workload pods on Kubernetes; default `gantry`. */
  kubeNamespace?: string;
  /** dcgm-exporter's /metrics (or a federation of them) for GPU telemetry on Kubernetes; none: no samples. */
  kubeDcgmMetricsUrl?: string;
  /** Power hook of the Kubernetes driver (GANTRY_POWER_COMMAND / GANTRY_POWER_WEBHOOK_URL, docs/power.md). */
  powerHook?: PowerHook;
  /** Provisioning hook of bare-metal nodes on Kubernetes (docs/bare-metal.md). */
  bareMetalHook?: BareMetalHook;
  /** Cluster host of the `remote` driver (packages/driver/src/remote/serve.ts). */
  remoteUrl?: string;
}

export function createDriver(config: DriverConfig): ClusterDriver {
  switch (config.driver) {
    case 'simulated':
      return new SimulatedDriver({
        topology: config.simCluster ? loadTopologyFile(config.simCluster) : demoTopology(),
        speed: config.simSpeed,
        heartbeats: config.simHeartbeats ?? true,
        delays: config.simDelays,
      });
    case 'kubernetes':
      return new KubernetesDriver({
        kubeconfigPath: config.kubeconfig,
        namespace: config.kubeNamespace,
        dcgmMetricsUrl: config.kubeDcgmMetricsUrl,
        powerHook: config.powerHook,
        bareMetalHook: config.bareMetalHook,
      });
    case 'remote':
      if (!config.remoteUrl) throw new Error('the remote driver needs the URL of its cluster host (GANTRY_DRIVER_URL)');
      return new RemoteDriver({ url: config.remoteUrl });
    default: {
      const unknown: never = config.driver;
      throw new Error(`unknown cluster driver ${String(unknown)}: expected simulated, kubernetes or remote`);
    }
  }
}
