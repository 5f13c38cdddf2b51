import type { Provider } from '@nestjs/common';
import { createDriver, type ClusterDriver } from '@gantry/driver';
import { APP_CONFIG, type AppConfig } from '../config/config';

export const CLUSTER_DRIVER = Symbol('CLUSTER_DRIVER');

/** The cluster driver chosen by GANTRY_DRIVER (simulated by default). Worker mode only. */
export const driverProvider: Provider = {
  provide: CLUSTER_DRIVER,
  inject: [APP_CONFIG],
  useFactory: (config: AppConfig): ClusterDriver =>
    createDriver({
      driver: config.driver.kind,
      simCluster: config.driver.simCluster,
      simSpeed: config.driver.simSpeed,
      kubeconfig: config.driver.kubeconfig,
      remoteUrl: config.driver.remoteUrl,
    }),
};

export type { ClusterDriver };
