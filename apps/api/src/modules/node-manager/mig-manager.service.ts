import { Inject, Injectable, Logger } from '@nestjs/common';
import { migProfile, validateMigLayout } from '@gantry/scheduler';
import { CLUSTER_DRIVER, type ClusterDriver } from '../../driver/driver.provider';
import { QueuesService } from '../../queues/queues.service';
import { crashPoint } from '../../common/crash-points';
import type { QueuePayload } from '../../queues/queue-names';
import { RetryLater } from '../../queues/retry-later';
import { RedisService } from '../../common/redis.service';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { withLease } from './gpu-lease';
import { NodesRepository } from './nodes.repository';
import { MigChangesRepository } from './mig-changes.repository';
import { layoutKey } from './mig-layout-key';

/** A manual change waits this long for its slices to become idle before it is abandoned. */
export const MIG_IDLE_TIMEOUT_MS = 30 * 60 * 1000;

export { layoutKey } from './mig-layout-key';

/**
 * Applies one MIG change (the `mig` queue): the GPU is already out of scheduling (its node is
 * not); wait until the slices being destroyed are idle (a re-partition never kills running
 * work), apply through the driver, verify against the driver's inventory, store, back in
 * scheduling. Idempotent: a retry re-checks every step; a request replaced by a newer one is dropped.
 * One change of a GPU is applied at a time across workers (a Redis lease per GPU): without it a
 * request checked before a newer one replaced it could reach the driver after the newer one was
 * applied and stored, leaving the cluster with the older layout and the database with the newer.
 * The layout is stored only while it is still the GPU's target.
 */
@Injectable()
export class MigManagerService {
  private readonly logger = new Logger('mig');

  constructor(
    private readonly nodes: NodesRepository,
    private readonly migChanges: MigChangesRepository,
    private readonly queues: QueuesService,
    @Inject(CLUSTER_DRIVER) private readonly driver: ClusterDriver,
    private readonly redis: RedisService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Takes the GPU out of scheduling now and queues the change. */
  async request(gpuId: string, layout: { profile: string; start: number }[], reason: string): Promise<void> {
    await this.migChanges.beginMigChange(gpuId, layout, reason, new Date());
    await this.queues.mig({ gpuId, layout, reason });
  }

  async apply(p: QueuePayload<'mig'>): Promise<void> {
    const lease = await withLease(this.redis.client, `${this.config.queuePrefix}:mig-apply:${p.gpuId}`, () => this.applyHeld(p));
    if (!lease.held) throw new RetryLater(`GPU ${p.gpuId}: another MIG change of this GPU is being applied`);
  }

  private async applyHeld(p: QueuePayload<'mig'>): Promise<void> {
    const gpu = await this.nodes.findGpu(p.gpuId);
    if (!gpu) return;
    const target = gpu.migTarget as { profile: string; start: number }[] | null;
    if (!target || layoutKey(target) !== layoutKey(p.layout)) return; // replaced by a newer request, or done
    const abandon = async (why: string) => {
      this.logger.warn(`GPU ${gpu.index} of ${gpu.node.name}: ${why}`);
      await this.migChanges.abandonMigChange(gpu.id, why);
      await this.queues.requestSchedule(`MIG change on ${gpu.id} abandoned`);
    };
    const valid = validateMigLayout(gpu.model, p.layout);
    if (!valid.ok) return abandon(`invalid layout (${valid.rule}): ${valid.message}`);
    if (gpu.node.persona === 'vm_passthrough' && p.layout.length) return abandon('the node runs the vm-passthrough persona: its GPUs go whole to VMs');
    // Wait until every slice that goes away (or the whole GPU) is idle.
    const keeps = (a: { migProfile: string | null; migStart: number | null }) => p.layout.some((e) => e.profile === a.migProfile && e.start === a.migStart);
    const busy = (await this.migChanges.gpuAllocations(gpu.id)).filter((a) => a.migStart === null || !keeps(a));
    if (busy.length) {
      const waited = Date.now() - (gpu.migRequestedAt?.getTime() ?? Date.now());
      if (waited > MIG_IDLE_TIMEOUT_MS) return abandon(`slices still busy after ${Math.round(waited / 60000)} min`);
      throw new RetryLater(`GPU ${gpu.index} of ${gpu.node.name}: waiting for ${busy.length} busy slice(s) to finish`);
    }
    // Compared with what the cluster has, not with the database's rows: after a restart of the
    // cluster (or a change outside Gantry) they differ, and only the driver's layout takes work.
    const onCluster = async () => (await this.driver.discoverNode(gpu.node.name))?.gpus.find((g) => g.index === gpu.index);
    const before = await onCluster();
    if (!before || layoutKey(before.migLayout) !== layoutKey(p.layout)) {
      crashPoint('mig.requested');
      await this.driver.applyMigLayout(gpu.node.name, gpu.index, p.layout);
      crashPoint('mig.applied');
      const seen = await onCluster();
      if (!seen || layoutKey(seen.migLayout) !== layoutKey(p.layout))
        throw new Error(`GPU ${gpu.index} of ${gpu.node.name}: the driver reports another layout after the change`);
    }
    const sized = p.layout.map((e) => ({ ...e, size: migProfile(gpu.model, e.profile)!.size }));
    const stored = await this.migChanges.commitMigLayout(gpu.id, sized, new Date(), { whileTarget: p.layout });
    if (stored === 'replaced') return; // a newer request is the target now: its job applies it over this one
    if (!stored) throw new RetryLater('a slice got busy meanwhile');
    await this.queues.requestSchedule(`MIG layout applied on ${gpu.node.name} GPU ${gpu.index}`);
  }
}
