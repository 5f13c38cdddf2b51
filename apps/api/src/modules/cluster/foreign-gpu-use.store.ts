import { Injectable } from '@nestjs/common';
import type { ForeignGpuUseByNode } from './foreign-gpu-use';

/**
 * What the worker last heard from the driver about GPUs held by pods Gantry did not create
 * (Kubernetes: another scheduler's or a user's pods on a Gantry-managed node). In memory: the
 * reconciler refreshes it from the driver at boot and on every tick, and the scheduling cycle
 * counts it as used capacity (markForeignUse), so such GPUs are never offered.
 */
@Injectable()
export class ForeignGpuUse {
  private byNode: ForeignGpuUseByNode = new Map();

  set(byNode: ForeignGpuUseByNode): void {
    this.byNode = byNode;
  }

  current(): ForeignGpuUseByNode {
    return this.byNode;
  }
}
