/**
 * Plays the kubelet for Gantry's pods on a real API server (there are no nodes behind it): a pod
 * bound to a node is reported Running; a pod being deleted (stop, suspend, eviction) is removed
 * once "its containers stopped" (after writing the checkpoint `checkpointOnSigterm` names, as a
 * workload does on SIGTERM, and after `holdTerminating` ms); `finish` ends a pod with an exit code
 * exactly when a test says so (also across an API server restart). The kube-emulator plays the
 * whole cluster on its own clock; this is the part the driver's tests drive by hand.
 */
import type { CoreV1Api, KubeConfig, V1Pod } from '@kubernetes/client-node';
import { KubeApi, loadClientNode } from '../kube-api';
import { Informer } from '../informer';
import { GANTRY_ANNOTATIONS, GANTRY_LABELS } from '../../shared/labels';

export class TestKubelet {
  private readonly core: CoreV1Api;
  private readonly informer: Informer<V1Pod>;
  private readonly statusPatch = loadClientNode().setHeaderOptions('Content-Type', loadClientNode().PatchStrategy.MergePatch);
  private readonly pending = new Set<Promise<unknown>>();
  /** The checkpoint a pod's workload saves on SIGTERM (`gantry.io/checkpoint-saved`); none when undefined. */
  checkpointOnSigterm?: (pod: V1Pod) => { checkpoint: string; progressSeconds: number } | undefined;
  /** How long a deleted pod takes to stop (ms). */
  holdTerminating = 0;

  constructor(
    config: KubeConfig,
    private readonly namespace: string,
  ) {
    this.core = config.makeApiClient(loadClientNode().CoreV1Api);
    this.informer = new Informer<V1Pod>({
      what: 'test kubelet',
      source: new KubeApi(config).podInformerSource(namespace, GANTRY_LABELS.jobId),
      onDelta: (d) => {
        if (d.type !== 'DELETED') this.react(d.object);
      },
      backoff: { initialMs: 50, maxMs: 500 },
      warn: () => undefined,
    });
  }

  async start(): Promise<void> {
    this.informer.start();
    await this.informer.synced();
  }

  async stop(): Promise<void> {
    await this.informer.stop();
    await Promise.allSettled([...this.pending]);
  }

  /** Ends a pod: Succeeded with exit code 0, Failed otherwise. */
  async finish(name: string, exitCode: number): Promise<void> {
    const now = new Date().toISOString();
    const startedAt = now;
    await this.core.patchNamespacedPodStatus(
      {
        name,
        namespace: this.namespace,
        body: {
          status: {
            phase: exitCode === 0 ? 'Succeeded' : 'Failed',
            containerStatuses: [
              { name: 'workload', image: 'x', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode, startedAt, finishedAt: now } } },
            ],
          },
        },
      },
      this.statusPatch,
    );
  }

  private async terminate(pod: V1Pod): Promise<void> {
    const name = pod.metadata!.name!;
    const saved = this.checkpointOnSigterm?.(pod);
    if (saved) {
      const annotations = { [GANTRY_ANNOTATIONS.checkpointSaved]: JSON.stringify({ ...saved, at: new Date().toISOString() }) };
      await this.core.patchNamespacedPod({ name, namespace: this.namespace, body: { metadata: { annotations } } }, this.statusPatch);
    }
    if (this.holdTerminating > 0) await new Promise((resolve) => setTimeout(resolve, this.holdTerminating));
    await this.core.deleteNamespacedPod({ name, namespace: this.namespace, gracePeriodSeconds: 0 });
  }

  private react(pod: V1Pod): void {
    const name = pod.metadata!.name!;
    const track = (p: Promise<unknown>) => {
      this.pending.add(p);
      void p.catch(() => undefined).finally(() => this.pending.delete(p));
    };
    if (pod.metadata?.deletionTimestamp) {
      track(this.terminate(pod));
    } else if (pod.spec?.nodeName && (pod.status?.phase ?? 'Pending') === 'Pending') {
      const startedAt = new Date().toISOString();
      track(
        this.core.patchNamespacedPodStatus(
          {
            name,
            namespace: this.namespace,
            body: {
              status: {
                phase: 'Running',
                startTime: startedAt,
                containerStatuses: [{ name: 'workload', image: 'x', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt } } }],
              },
            },
          },
          this.statusPatch,
        ),
      );
    }
  }
}
