/**
 * The GPU Operator's persona switch: when `nvidia.com/gpu.workload.config` changes
 * (container <-> vm-passthrough), the operator tears down the node's GPU stack (its GPU
 * resources drop to 0), and after the switch delay advertises the new persona's resources:
 * `nvidia.com/gpu` / `nvidia.com/mig-*` for containers, the passthrough device for VMs. Gantry's
 * `gantry.io/persona` (container <-> inference) changes no stack and applies at once.
 */
import { kubernetesSpecs, type Persona } from '@gantry/driver';
import type { V1Node } from '@kubernetes/client-node';
import type { EmulatedNode } from '../cluster/emulated-node';
import type { NodeRegistrar } from '../cluster/node-registrar';

const { personaFromLabels, workloadConfigOf } = kubernetesSpecs;

export interface PersonaSwitchOptions {
  registrar: NodeRegistrar;
  switchSeconds: number;
  onError: (what: string, err: unknown) => void;
}

export class PersonaSwitch {
  private readonly inFlight = new Map<string, { persona: Persona; timer: NodeJS.Timeout }>();
  private stopped = false;

  constructor(
    private readonly nodes: ReadonlyMap<string, EmulatedNode>,
    private readonly options: PersonaSwitchOptions,
  ) {}

  onNode(object: V1Node): void {
    const node = this.nodes.get(object.metadata?.name ?? '');
    if (!node || node.gpus.length === 0 || this.stopped || node.down) return;
    const wanted = personaFromLabels(object.metadata?.labels ?? {});
    const running = this.inFlight.get(node.name);
    if (running?.persona === wanted || (!running && wanted === node.persona)) return;
    if (running) clearTimeout(running.timer);
    const sameStack = workloadConfigOf(wanted) === workloadConfigOf(node.persona) && !node.switchingPersona;
    if (sameStack) {
      this.inFlight.delete(node.name);
      node.persona = wanted;
      return;
    }
    node.switchingPersona = true;
    this.publish(node);
    const timer = setTimeout(() => {
      this.inFlight.delete(node.name);
      node.persona = wanted;
      node.switchingPersona = false;
      this.publish(node);
    }, this.options.switchSeconds * 1000);
    this.inFlight.set(node.name, { persona: wanted, timer });
  }

  stop(): void {
    this.stopped = true;
    for (const { timer } of this.inFlight.values()) clearTimeout(timer);
  }

  private publish(node: EmulatedNode): void {
    if (this.stopped) return;
    this.options.registrar.publishStatus(node).catch((err) => this.options.onError(`publishing the GPU resources of node ${node.name}`, err));
  }
}
