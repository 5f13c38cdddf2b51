import { describeDriverContract } from '../__tests__/driver-contract';
import { startFakeCluster } from './__tests__/fake-cluster';

// Against the fake API server: its fake mig-manager, persona swap and kubelet play the cluster,
// so every contract case runs; job progress is real time (1 second per second).
describeDriverContract('kubernetes (fake API server)', async () => {
  const { server, driver } = await startFakeCluster();
  return { driver, progressPerSecond: 1, close: () => server.close() };
});
