import { describeDriverContract } from '../__tests__/driver-contract';
import { demoTopology } from './generate-topology';
import { SimulatedDriver } from './simulated-driver';

const SPEED = 100;

describeDriverContract('simulated (demo topology, speed 100)', async () => ({
  driver: new SimulatedDriver({ topology: demoTopology(), speed: SPEED, delays: { personaSwitchSeconds: 10 } }),
  progressPerSecond: SPEED,
  close: async () => undefined,
}));
