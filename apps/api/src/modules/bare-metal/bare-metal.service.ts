import { Injectable } from '@nestjs/common';
import type { BareMetalLease, BareMetalLeaseList, ZBareMetalLeaseCreate } from '@gantry/contracts';
import type { z } from 'zod';
import { DomainError, notFound } from '../../common/errors';
import { scopeOf, type Principal } from '../../common/principal';
import type { TenantScope } from '../../common/tenant-scope';
import { QueuesService } from '../../queues/queues.service';
import { TenantsRepository } from '../tenants/tenants.repository';
import { QuotasRepository } from '../quotas/quotas.repository';
import { checkFitsQuota } from '../quotas/quota-coverage';
import { BareMetalLeasesRepository } from './bare-metal-leases.repository';
import { BareMetalNodesRepository } from './bare-metal-nodes.repository';
import { presentLease } from './bare-metal.presenter';

/**
 * Bare-metal leases as the API serves them (docs/bare-metal.md): request whole nodes, list,
 * suspend (power off, the nodes stay the team's), resume, release (disk wipe, nodes back to the
 * pool). The API only changes Postgres and wakes the worker's provisioner; it never calls the driver.
 */
@Injectable()
export class BareMetalService {
  constructor(
    private readonly leases: BareMetalLeasesRepository,
    private readonly hardware: BareMetalNodesRepository,
    private readonly teams: TenantsRepository,
    private readonly quotas: QuotasRepository,
    private readonly queues: QueuesService,
  ) {}

  async create(p: Principal, body: z.output<typeof ZBareMetalLeaseCreate>): Promise<BareMetalLease> {
    const scope = scopeOf(p);
    if (scope.kind !== 'tenant') throw new DomainError('forbidden', 'bare-metal leases are requested with a tenant or team key');
    if (!(await this.teams.findTeam(scope, body.teamId))) throw notFound('team', body.teamId);
    const nodes = await this.hardware.nodesOfModel(body.gpuModel);
    if (!nodes.length) {
      throw new DomainError('validation_failed', `no node of the cluster has ${body.gpuModel} GPUs`, [
        { field: 'gpuModel', problem: 'no node has this GPU model' },
      ]);
    }
    const perLeaf = new Map<string, number>();
    for (const n of nodes) perLeaf.set(n.leaf, (perLeaf.get(n.leaf) ?? 0) + 1);
    const most = body.sameLeaf ? Math.max(...perLeaf.values()) : nodes.length;
    if (body.count > most) {
      const where = body.sameLeaf ? 'under one leaf switch' : 'in the cluster';
      throw new DomainError('validation_failed', `${body.count} ${body.gpuModel} nodes asked; at most ${most} exist ${where}`, [
        { field: 'count', problem: `at most ${most} ${body.gpuModel} nodes ${where}` },
      ]);
    }
    // Every GPU of a node held counts against the team's quota: the lease must fit its limit.
    const gpusPerNode = Math.max(...nodes.map((n) => n.gpus));
    checkFitsQuota(
      await this.quotas.bounds(scope, body.teamId, body.gpuModel),
      { gpuModel: body.gpuModel, units: body.count * gpusPerNode, mayBorrow: true, what: `${body.count} bare-metal node(s) of ${gpusPerNode} GPUs` },
      { size: 'count' },
    );
    const row = await this.leases.create(scope, { ...body, name: body.name });
    await this.queues.bareMetal({ action: 'tick' });
    return presentLease(row);
  }

  async list(p: Principal, teamId?: string): Promise<BareMetalLeaseList> {
    return { items: (await this.leases.list(scopeOf(p), { teamId })).map(presentLease) };
  }

  async get(p: Principal, id: string): Promise<BareMetalLease> {
    return presentLease(await this.found(scopeOf(p), id));
  }

  /** Powers the nodes off; the team keeps them (and their disks) until resumed or released. */
  suspend(p: Principal, id: string): Promise<BareMetalLease> {
    return this.change(
      p,
      id,
      { from: ['deployed'], to: 'suspending', reason: 'suspended: powering off', nodeFrom: ['deployed'], nodeTo: 'powering_off' },
      'deployed',
    );
  }

  resume(p: Principal, id: string): Promise<BareMetalLease> {
    return this.change(
      p,
      id,
      { from: ['suspended'], to: 'resuming', reason: 'resumed: powering on', nodeFrom: ['powered_off'], nodeTo: 'powering_on' },
      'suspended',
    );
  }

  /** Wipes the disks and gives the nodes back to the pool (a queued lease just ends). */
  release(p: Principal, id: string): Promise<BareMetalLease> {
    return this.change(
      p,
      id,
      {
        from: ['pending', 'provisioning', 'deployed', 'suspending', 'suspended', 'resuming'],
        to: 'releasing',
        reason: 'released: wiping the disks',
        nodeTo: 'deprovisioning',
      },
      'not released',
    );
  }

  private async change(p: Principal, id: string, change: Parameters<BareMetalLeasesRepository['request']>[2], needs: string): Promise<BareMetalLease> {
    const scope = scopeOf(p);
    const lease = await this.found(scope, id);
    if (!(await this.leases.request(scope, id, change))) {
      throw new DomainError(
        'invalid_state',
        `lease ${lease.name} is ${lease.state}: it must be ${needs} to be ${change.to === 'releasing' ? 'released' : change.to === 'suspending' ? 'suspended' : 'resumed'}`,
      );
    }
    await this.queues.bareMetal({ action: 'tick' });
    return presentLease(await this.found(scope, id));
  }

  private async found(scope: TenantScope, id: string) {
    const row = await this.leases.find(scope, id);
    if (!row) throw notFound('bare-metal lease', id);
    return row;
  }
}
