import { Injectable } from '@nestjs/common';
import { BareMetalProvisioner, type BareMetalTickReport } from '../modules/bare-metal/bare-metal-provisioner.service';
import { QUEUES } from '../queues/queue-names';
import type { QueueProcessor } from './processor';

/** `bare-metal`: the provisioner's tick, or one node's step (steps take minutes: many run at once). */
@Injectable()
export class BareMetalProcessor implements QueueProcessor {
  readonly queue = 'bare-metal' as const;
  readonly concurrency = 32;

  constructor(private readonly provisioner: BareMetalProvisioner) {}

  async process(data: unknown): Promise<BareMetalTickReport | void> {
    const p = QUEUES['bare-metal'].parse(data);
    if (p.action === 'tick') return this.provisioner.tick();
    if (p.nodeId) return this.provisioner.step(p.nodeId);
  }
}
