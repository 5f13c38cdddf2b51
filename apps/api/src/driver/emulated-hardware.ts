/**
 * The hardware of an emulated Kubernetes GPU cluster: the kube-emulator's control API
 * (packages/kube-emulator, `POST /v1/faults`). A real cluster's driver cannot fake an Xid, reset
 * a GPU or power-cycle a node; on the emulator these are the emulator's faults and recoveries, so
 * `POST /v1/sim/faults` and the incident loop (reset, reboot) work as on the simulated cluster.
 */
import type { ClusterDriver, FaultInjection } from '@gantry/driver';

export class EmulatorControlClient {
  constructor(
    private readonly baseUrl: string,
    private readonly timeoutMs = 10_000,
  ) {}

  /** Posts one fault (or recovery); resolves once the emulator has written it to the API server. */
  async fault(fault: FaultInjection): Promise<void> {
    const url = new URL('/v1/faults', this.baseUrl);
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(fault),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    if (res.status === 204 || res.ok) return;
    const text = (await res.text().catch(() => '')).slice(0, 300);
    throw new Error(`kube-emulator ${url.href} refused ${fault.kind} on ${fault.nodeName}: ${res.status} ${text}`);
  }
}

/** Gives the driver of an emulated cluster the emulator's faults, GPU resets and node reboots. */
export function withEmulatedHardware(driver: ClusterDriver, control: EmulatorControlClient): ClusterDriver {
  driver.injectFault = (fault) => control.fault(fault);
  driver.resetGpu = (nodeName, gpuIndex) => control.fault({ nodeName, gpuIndex, kind: 'recover' });
  driver.rebootNode = (nodeName) => control.fault({ nodeName, kind: 'recover' });
  return driver;
}
