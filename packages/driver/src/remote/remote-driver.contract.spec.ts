import { describeDriverContract } from '../__tests__/driver-contract';
import { demoTopology } from '../simulated/generate-topology';
import { SimulatedDriver } from '../simulated/simulated-driver';
import { serveDriver } from './cluster-host';
import { RemoteDriver } from './remote-driver';

const SPEED = 100;

describeDriverContract('remote (a simulated cluster served by a cluster host over HTTP)', async () => {
  const hosted = new SimulatedDriver({ topology: demoTopology(), speed: SPEED, delays: { personaSwitchSeconds: 10 } });
  const host = await serveDriver(hosted);
  const driver = new RemoteDriver({ url: host.url, reconnectMs: 50 });
  return {
    driver,
    progressPerSecond: SPEED,
    close: async () => {
      await driver.close();
      await host.close();
      await hosted.close();
    },
  };
});
