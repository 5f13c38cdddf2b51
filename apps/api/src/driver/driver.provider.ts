import type { Provider } from '@nestjs/common';
import { createDriver, type ClusterDriver } from '@gantry/driver';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { EmulatorControlClient, withEmulatedHardware } from './emulated-hardware';

export const CLUSTER_DRIVER = Symbol('CLUSTER_DRIVER');

/**
 * The cluster driver chosen by GANTRY_DRIVER (simulated by default). Worker mode only. On a
 * kube-emulator cluster (GANTRY_KUBE_EMULATOR_URL), the emulator plays faults, resets and reboots.
 */
export const driverProvider: Provider = {
  provide: CLUSTER_DRIVER,
  inject: [APP_CONFIG],
  useFactory: (config: AppConfig): ClusterDriver => {
    const driver = createDriver({
      driver: config.driver.kind,
      simCluster: config.driver.simCluster,
      simSpeed: config.driver.simSpeed,
      kubeconfig: config.driver.kubeconfig,
      kubeDcgmMetricsUrl: config.driver.kubeDcgmMetricsUrl,
      remoteUrl: config.driver.remoteUrl,
      powerHook: config.driver.powerHook,
      bareMetalHook: config.driver.bareMetalHook,
    });
    return config.driver.kubeEmulatorUrl ? withEmulatedHardware(driver, new EmulatorControlClient(config.driver.kubeEmulatorUrl)) : driver;
  },
};

export type { ClusterDriver };
