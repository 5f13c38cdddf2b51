/**
 * The GPU Operator's mig-manager on every emulated node: when `nvidia.com/mig.config` names a
 * config other than the one applied (or the state label was removed to ask again), it sets
 * `nvidia.com/mig.config.state=pending`, waits the apply delay, reads the mig-parted config from
 * its ConfigMap, and either re-partitions the GPUs (new `nvidia.com/mig-<profile>` capacity,
 * state `success`) or reports `failed`: an unknown config, an illegal layout for the catalog's
 * geometry, or a GPU whose layout would change while a pod runs on it (MIG rule 6).
 */
import { kubernetesSpecs, sameMigLayout, type MigSliceSpec } from '@gantry/driver';
import type { V1Node } from '@kubernetes/client-node';
import type { EmulatedNode } from '../cluster/emulated-node';
import type { NodeRegistrar } from '../cluster/node-registrar';
import { httpStatusOf, type KubeClients } from '../kube/client';
import type { Kubelet } from '../kubelet/kubelet';
import { parseMigPartedConfig, planMigConfig } from './mig-parted';

const { GPU_LABELS, GANTRY_ANNOTATIONS } = kubernetesSpecs;

export interface MigManagerOptions {
  clients: KubeClients;
  registrar: NodeRegistrar;
  kubelet: Kubelet;
  /** Where the mig-parted config file lives (the driver's KUBERNETES_DRIVER_DEFAULTS.migPartedConfigMap). */
  configMap: { namespace: string; name: string; key: string };
  applySeconds: number;
  onError: (what: string, err: unknown) => void;
}

export class MigManager {
  /** Config name last settled per node (success or failure): not retried until the label changes. */
  private readonly settled = new Map<string, string>();
  private readonly inFlight = new Map<string, { config: string; timer: NodeJS.Timeout }>();
  private stopped = false;

  constructor(
    private readonly nodes: ReadonlyMap<string, EmulatedNode>,
    private readonly latest: (name: string) => V1Node | undefined,
    private readonly options: MigManagerOptions,
  ) {}

  /** Called with every change to an emulated Node. */
  onNode(object: V1Node): void {
    const node = this.nodes.get(object.metadata?.name ?? '');
    if (!node || node.gpus.length === 0 || this.stopped) return;
    const labels = object.metadata?.labels ?? {};
    const config = labels[GPU_LABELS.migConfig];
    if (!config) return;
    const settled = this.settled.get(node.name) ?? node.appliedMigConfig;
    const asked = config !== settled || labels[GPU_LABELS.migConfigState] === undefined;
    const running = this.inFlight.get(node.name);
    if (!asked || running?.config === config || node.down) return;
    if (running) clearTimeout(running.timer);
    const timer = setTimeout(() => void this.apply(node, config), this.options.applySeconds * 1000);
    this.inFlight.set(node.name, { config, timer });
    if (labels[GPU_LABELS.migConfigState] !== 'pending') void this.setState(node.name, 'pending');
  }

  stop(): void {
    this.stopped = true;
    for (const { timer } of this.inFlight.values()) clearTimeout(timer);
  }

  private async apply(node: EmulatedNode, config: string): Promise<void> {
    this.inFlight.delete(node.name);
    const object = this.latest(node.name);
    if (this.stopped || !object || object.metadata?.labels?.[GPU_LABELS.migConfig] !== config) return;
    try {
      const file = await this.readConfigFile();
      const plan = planMigConfig(node, config, file, annotatedLayouts(object));
      const outcome = plan.ok ? this.busyGpu(node, plan.layouts) : plan.reason;
      this.settled.set(node.name, config);
      if (plan.ok && outcome === undefined) {
        for (const gpu of node.gpus) gpu.migLayout = plan.layouts[gpu.index] ?? [];
        node.appliedMigConfig = config;
        await this.options.registrar.publishStatus(node);
        await this.setState(node.name, 'success');
      } else {
        this.options.onError(`mig-manager on node ${node.name} could not apply ${config}`, new Error(outcome));
        await this.setState(node.name, 'failed');
      }
    } catch (err) {
      this.options.onError(`mig-manager on node ${node.name}`, err);
      await this.setState(node.name, 'failed');
    }
  }

  /** Why the change cannot happen now: a pod runs on a GPU whose layout changes. */
  private busyGpu(node: EmulatedNode, layouts: Record<number, MigSliceSpec[]>): string | undefined {
    for (const gpu of node.gpus) {
      if (sameMigLayout(gpu.migLayout, layouts[gpu.index] ?? [])) continue;
      const pods = this.options.kubelet.devices.podsOnGpu(node.name, gpu.index);
      if (pods.length > 0) return `GPU ${gpu.index} is in use by ${pods.length} pod(s): its MIG instances cannot be destroyed`;
    }
    return undefined;
  }

  private async readConfigFile() {
    const { namespace, name, key } = this.options.configMap;
    try {
      const configMap = await this.options.clients.core.readNamespacedConfigMap({ namespace, name });
      const text = configMap.data?.[key];
      return text ? parseMigPartedConfig(this.options.clients.k8s.loadYaml(text)) : undefined;
    } catch (err) {
      if (httpStatusOf(err) === 404) return undefined;
      throw err;
    }
  }

  private async setState(nodeName: string, state: 'pending' | 'success' | 'failed'): Promise<void> {
    try {
      await this.options.registrar.patchMetadata(nodeName, { labels: { [GPU_LABELS.migConfigState]: state } });
    } catch (err) {
      this.options.onError(`setting ${GPU_LABELS.migConfigState}=${state} on node ${nodeName}`, err);
    }
  }
}

function annotatedLayouts(node: V1Node): Record<number, MigSliceSpec[]> | undefined {
  const text = node.metadata?.annotations?.[GANTRY_ANNOTATIONS.migLayouts];
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as Record<string, MigSliceSpec[]>;
    return Object.fromEntries(Object.entries(parsed).map(([index, layout]) => [Number(index), layout]));
  } catch {
    return undefined;
  }
}
