/**
 * The hardware of an emulated Kubernetes GPU cluster: the kube-emulator's control API
 * (packages/kube-emulator, `POST /v1/faults`). A real cluster's driver cannot fake an Xid, reset
 * a GPU or power-cycle a node; on the emulator these are the emulator's faults and recoveries, so
 * `POST /v1/sim/faults` and the incident loop (reset, reboot) work as on the simulated cluster,
 * latent defects included: a reset or reboot (`POST /v1/repairs`) leaves them, `recover` replaces the part.
 */
import type { ClusterDriver, FaultInjection } from '@gantry/driver';

export class EmulatorControlClient {
  constructor(
    private readonly baseUrl: string,
    private readonly timeoutMs = 10_000,
  ) {}

  /** Posts one fault (or recovery: the part replaced); resolves once the emulator has written it to the API server. */
  fault(fault: FaultInjection): Promise<void> {
    return this.post('/v1/faults', fault, `${fault.kind} on ${fault.nodeName}`);
  }

  /** A GPU reset (gpuIndex) or a node reboot: what a fault left clears, a latent defect stays. */
  repair(nodeName: string, gpuIndex?: number): Promise<void> {
    return this.post('/v1/repairs', { nodeName, gpuIndex }, gpuIndex === undefined ? `a reboot of ${nodeName}` : `a reset of GPU ${gpuIndex} of ${nodeName}`);
  }

  private async post(path: string, body: object, what: string): Promise<void> {
    const url = new URL(path, this.baseUrl);
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    if (res.status === 204 || res.ok) return;
    const text = (await res.text().catch(() => '')).slice(0, 300);
    throw new Error(`kube-emulator ${url.href} refused ${what}: ${res.status} ${text}`);
  }
}

/** Gives the driver of an emulated cluster the emulator's faults, GPU resets and node reboots. */
export function withEmulatedHardware(driver: ClusterDriver, control: EmulatorControlClient): ClusterDriver {
  driver.injectFault = (fault) => control.fault(fault);
  driver.resetGpu = (nodeName, gpuIndex) => control.repair(nodeName, gpuIndex);
  driver.rebootNode = (nodeName) => control.repair(nodeName);
  return driver;
}
