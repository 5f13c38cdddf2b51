import { Injectable } from '@nestjs/common';
import { Prisma } from '@gantry/db';
import { PrismaService } from '../../common/prisma.service';
import { EVENT_COLUMNS, type NewEvent } from '../events/events.repository';
import { ALLOCATION_COLUMNS } from '../allocations/gpu-slots';
import { insertAll, sqlTime as time, type Column } from '../../common/bulk-insert';
import { addToRollups } from '../telemetry/telemetry.repository';
import type { RollupRow } from '../telemetry/telemetry-tick';
import type { UsageRecord } from '../fair-share/usage-decay';

/** The one row of the replayed past (a second start finds it). */
const HISTORY_ID = 'demo';
/** The same lock the scheduling cycle takes to roll decayed usage (FairShareRepository.roll). */
const FAIR_SHARE_LOCK = 'gantry:fair-share-roll';
const HISTORY_LOCK = 'gantry:demo-history';
/** A week of rows goes in one transaction: longer than the interactive default of 5 s. */
const WRITE_TIMEOUT_MS = 300_000;

/** A finished job of the past. */
export interface PastJob {
  id: string;
  tenantId: string;
  teamId: string;
  name: string;
  kind: string;
  state: 'succeeded' | 'failed' | 'cancelled';
  priority: string;
  replicas: number;
  resources: object;
  durationSeconds: number;
  progressSeconds: number;
  reasons: { code: string; message: string }[];
  createdAt: Date;
  startedAt: Date;
  finishedAt: Date;
}

export type PastEvent = NewEvent & { id: string; createdAt: Date };

export interface PastRows {
  fromAt: Date;
  toAt: Date;
  jobs: PastJob[];
  /** Released allocations (allocationRow's rows with their times). */
  allocations: (Prisma.AllocationCreateManyInput & { id: string; startedAt: Date; endedAt: Date })[];
  events: PastEvent[];
  incidents: Prisma.IncidentCreateManyInput[];
  rollups: RollupRow[];
  /** Each team's decayed usage with the past added, given its stored record (if any). */
  usage: (teamId: string, record: UsageRecord | undefined) => UsageRecord;
  usageTeams: { teamId: string; tenantId: string }[];
}

/**
 * The demo's replayed past (docs/demo.md): reads the inventory and the teams, writes the past's
 * rows in one transaction with its marker. System access: the demo's past spans every demo
 * tenant, each row carrying its own team's tenant.
 */
@Injectable()
export class DemoHistoryRepository {
  constructor(private readonly prisma: PrismaService) {}

  async written(): Promise<boolean> {
    return (await this.prisma.client.demoHistory.count({ where: { id: HISTORY_ID } })) > 0;
  }

  inventory() {
    return this.prisma.client.node.findMany({
      select: {
        id: true,
        name: true,
        cpuMilli: true,
        memoryMiB: true,
        leaf: { select: { name: true, spine: { select: { name: true } } } },
        gpus: { select: { id: true, index: true, model: true, memoryMiB: true }, orderBy: { index: 'asc' } },
      },
      orderBy: { name: 'asc' },
    });
  }

  /** Teams with their `*` quota limit and their tenant's GPU total. */
  teams() {
    return this.prisma.client.team.findMany({
      select: {
        id: true,
        tenantId: true,
        slug: true,
        quotas: { where: { gpuModel: '*' }, select: { limit: true } },
        tenant: { select: { gpuTotal: true } },
      },
      orderBy: [{ tenantId: 'asc' }, { slug: 'asc' }],
    });
  }

  /** The earliest minute the live telemetry has written, if any: the past must end before it. */
  async firstLiveMinute(): Promise<Date | null> {
    const r = await this.prisma.client.usageRollup.aggregate({ where: { stepSeconds: 60 }, _min: { bucket: true } });
    return r._min.bucket;
  }

  /**
   * Writes the past in one transaction, or nothing when it is already written (false). The
   * decayed usage of the teams is updated under the scheduling cycle's lock, so the cycle never
   * rolls it forward at the same time.
   */
  async write(p: PastRows): Promise<boolean> {
    return this.prisma.client.$transaction(
      async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${HISTORY_LOCK}))`;
        const marker = await tx.demoHistory.createMany({
          data: [{ id: HISTORY_ID, fromAt: p.fromAt, toAt: p.toAt, jobs: p.jobs.length, allocations: p.allocations.length }],
          skipDuplicates: true,
        });
        if (marker.count === 0) return false;
        await insertAll(tx, 'Job', JOB_COLUMNS, p.jobs);
        await insertAll(tx, 'Allocation', ALLOCATION_COLUMNS, p.allocations);
        await insertAll(tx, 'Event', EVENT_COLUMNS, p.events);
        await tx.incident.createMany({ data: p.incidents });
        await addToRollups((text, values) => tx.$executeRawUnsafe(text, ...values), p.rollups);
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${FAIR_SHARE_LOCK}))`;
        const stored = await tx.teamUsageHistory.findMany({ where: { teamId: { in: p.usageTeams.map((t) => t.teamId) } } });
        const byTeam = new Map(stored.map((r) => [r.teamId, { gpuSeconds: r.decayedGpuSeconds, asOfMs: r.asOf.getTime() }]));
        for (const t of p.usageTeams) {
          const next = p.usage(t.teamId, byTeam.get(t.teamId));
          await tx.teamUsageHistory.upsert({
            where: { teamId: t.teamId },
            create: { teamId: t.teamId, tenantId: t.tenantId, decayedGpuSeconds: next.gpuSeconds, asOf: new Date(next.asOfMs) },
            update: { decayedGpuSeconds: next.gpuSeconds, asOf: new Date(next.asOfMs) },
          });
        }
        return true;
      },
      { timeout: WRITE_TIMEOUT_MS, maxWait: 30_000 },
    );
  }
}

const JOB_COLUMNS: Column<PastJob>[] = [
  { name: 'id', type: 'text', value: (j) => j.id },
  { name: 'tenantId', type: 'text', value: (j) => j.tenantId },
  { name: 'teamId', type: 'text', value: (j) => j.teamId },
  { name: 'name', type: 'text', value: (j) => j.name },
  { name: 'kind', type: 'text', cast: '"JobKind"', value: (j) => j.kind },
  { name: 'state', type: 'text', cast: '"JobState"', value: (j) => j.state },
  { name: 'priority', type: 'text', cast: '"Priority"', value: (j) => j.priority },
  { name: 'replicas', type: 'int', value: (j) => j.replicas },
  { name: 'resources', type: 'text', cast: 'jsonb', value: (j) => JSON.stringify(j.resources) },
  { name: 'durationSeconds', type: 'float8', value: (j) => j.durationSeconds },
  { name: 'progressSeconds', type: 'float8', value: (j) => j.progressSeconds },
  { name: 'reasons', type: 'text', cast: 'jsonb', value: (j) => JSON.stringify(j.reasons) },
  { name: 'createdAt', type: 'timestamp(3)', value: (j) => time(j.createdAt) },
  { name: 'startedAt', type: 'timestamp(3)', value: (j) => time(j.startedAt) },
  { name: 'finishedAt', type: 'timestamp(3)', value: (j) => time(j.finishedAt) },
];
