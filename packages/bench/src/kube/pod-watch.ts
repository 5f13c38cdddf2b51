/**
 * Watches Gantry's pods on the API server and records, per job, when its pod was first seen
 * Running; checks that no whole GPU (node + index, from the pod's GANTRY_GPU_INDEXES) is held by
 * two Running pods at once.
 */
import { kubeJson, kubeRequest, type KubeEndpoint } from './kube-http';

interface Pod {
  metadata: { name: string; resourceVersion?: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec: { nodeName?: string; containers: { env?: { name: string; value?: string }[]; resources?: { requests?: Record<string, string> } }[] };
  status?: { phase?: string; reason?: string };
}

export interface PodWatchReport {
  /** jobId -> ms since epoch when its (first) pod was first seen Running. */
  runningAt: Map<string, number>;
  /** Pods seen Running while a whole GPU they hold was held by another Running pod. */
  doubleBound: string[];
  /** Pods that failed (e.g. the emulated device plugin refusing them: UnexpectedAdmissionError). */
  failed: Map<string, string>;
}

export class PodWatch {
  readonly runningAt = new Map<string, number>();
  readonly doubleBound: string[] = [];
  readonly failed = new Map<string, string>();
  private readonly slots = new Map<string, string>(); // "node/gpu" -> pod name
  private readonly heldBy = new Map<string, string[]>(); // pod name -> slots
  private stopped = false;
  private current?: { destroy(): void };

  constructor(
    private readonly api: KubeEndpoint,
    private readonly namespace: string,
    private readonly onError: (message: string) => void,
  ) {}

  /** Lists, then watches from the list's resourceVersion (again after a watch ends) until stop(). */
  async start(): Promise<void> {
    const list = await kubeJson<{ metadata: { resourceVersion: string }; items: Pod[] }>(this.api, `/api/v1/namespaces/${this.namespace}/pods`);
    for (const pod of list.items) this.see('ADDED', pod);
    void this.watchLoop(list.metadata.resourceVersion);
  }

  stop(): void {
    this.stopped = true;
    this.current?.destroy();
  }

  private async watchLoop(resourceVersion: string): Promise<void> {
    let rv = resourceVersion;
    while (!this.stopped) {
      try {
        const res = await kubeRequest(
          this.api,
          `/api/v1/namespaces/${this.namespace}/pods?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}&timeoutSeconds=600`,
        );
        this.current = res;
        let buffer = '';
        for await (const chunk of res) {
          buffer += (chunk as Buffer).toString();
          let nl: number;
          while ((nl = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, nl);
            buffer = buffer.slice(nl + 1);
            if (!line.trim()) continue;
            const event = JSON.parse(line) as { type: string; object: Pod };
            if (event.type === 'ERROR') throw new Error(`watch error: ${JSON.stringify(event.object).slice(0, 200)}`);
            if (event.object.metadata.resourceVersion) rv = event.object.metadata.resourceVersion;
            if (event.type !== 'BOOKMARK') this.see(event.type, event.object);
          }
        }
      } catch (err) {
        if (!this.stopped) this.onError(`pod watch: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  private see(type: string, pod: Pod): void {
    const name = pod.metadata.name;
    const jobId = pod.metadata.labels?.['gantry.io/job-id'];
    const phase = pod.status?.phase;
    if (type === 'DELETED' || pod.metadata.deletionTimestamp || phase === 'Succeeded' || phase === 'Failed') {
      this.release(name);
      if (phase === 'Failed') this.failed.set(name, pod.status?.reason ?? 'Failed');
      return;
    }
    if (phase !== 'Running' || !jobId || this.heldBy.has(name)) return;
    if (!this.runningAt.has(jobId)) this.runningAt.set(jobId, Date.now());
    const container = pod.spec.containers[0];
    if (!container?.resources?.requests?.['nvidia.com/gpu']) {
      this.heldBy.set(name, []); // a MIG slice or a share: GPUs may be shared by design
      return;
    }
    const indexes =
      container.env
        ?.find((e) => e.name === 'GANTRY_GPU_INDEXES')
        ?.value?.split(',')
        .filter(Boolean) ?? [];
    const slots = indexes.map((i) => `${pod.spec.nodeName}/${i}`);
    for (const slot of slots) {
      const other = this.slots.get(slot);
      if (other && other !== name) this.doubleBound.push(`${name} and ${other} on ${slot}`);
      this.slots.set(slot, name);
    }
    this.heldBy.set(name, slots);
  }

  private release(name: string): void {
    for (const slot of this.heldBy.get(name) ?? []) if (this.slots.get(slot) === name) this.slots.delete(slot);
    this.heldBy.delete(name);
  }
}
