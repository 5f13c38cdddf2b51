import { Injectable } from '@nestjs/common';
import type { SqlTx } from '@gantry/db';
import { PrismaService } from '../../common/prisma.service';
import type { LatestGpuState, RollupDelta, RollupRow, TickAllocation } from './telemetry-tick';

/**
 * Telemetry storage: raw per-GPU samples (short retention), the latest state of each GPU and
 * usage rollups (1 minute and 1 hour). Written by the worker's `telemetry` queue only; the
 * rows carry tenantId/teamId, and reads with a tenant scope live in UtilizationRepository.
 */
@Injectable()
export class TelemetryRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Allocations that overlap (from, to]: still active, or ended after `from`. */
  async allocationsOverlapping(from: Date, to: Date): Promise<TickAllocation[]> {
    const rows = await this.prisma.client.allocation.findMany({
      where: { AND: [{ startedAt: { lte: to } }, { OR: [{ endedAt: null }, { endedAt: { gt: from } }] }] },
      select: { gpuId: true, nodeId: true, gpuModel: true, tenantId: true, teamId: true, gpuUnits: true, startedAt: true, endedAt: true },
    });
    return rows.map((a) => ({ ...a, gpuUnits: Number(a.gpuUnits) }));
  }

  async previousIdleSince(): Promise<Map<string, Date | null>> {
    const rows = await this.prisma.client.gpuTelemetry.findMany({ where: { idleSince: { not: null } }, select: { gpuId: true, idleSince: true } });
    return new Map(rows.map((r) => [r.gpuId, r.idleSince]));
  }

  /**
   * Writes one tick in one transaction. Returns false (and writes nothing) when the tick was
   * already written: a retried job does not count twice. A GPU's latest state, and its raw
   * sample, are written only when its state changed (most GPUs of a large cluster sit idle), and
   * never over the state of a later tick (a late tick, or two ticks at once: the latest state only
   * moves forward).
   */
  async writeTick(t: {
    at: Date;
    /** Every GPU's latest state (its raw sample, where it changed). */
    latest: LatestGpuState[];
    deltas: RollupDelta[];
    buckets: { stepSeconds: number; bucket: Date }[];
    /**
     * The tick this process wrote last, with the states it wrote. Only the GPUs whose state
     * differs from it are sent (the rest are in Postgres as they are): at 80,000 mostly idle
     * GPUs, most of the statement's arrays. Ticks of other writers since (the workers take ticks
     * in turn) are read back first: the states they changed replace this process's own.
     */
    since?: WrittenTick;
  }): Promise<boolean> {
    // typed SQL on the driver's connection: Prisma's raw queries pass each of these 80,000-element
    // arrays through its query compiler (about four times the CPU of the driver's own binding)
    const at = t.at.toISOString();
    return this.prisma.sql.transaction(async (tx) => {
      const marker = await tx.execute(`INSERT INTO "TelemetryTick" ("at", "gpus") VALUES ($1::timestamp(3), $2) ON CONFLICT DO NOTHING`, [at, t.latest.length]);
      if (marker === 0) return false;
      const written = t.since && t.since.at < t.at ? await writtenBefore(tx, at, t.since) : undefined;
      const latest = written ? changedSince(t.latest, written) : t.latest;

      if (latest.length) {
        await tx.execute(
          `WITH changed AS (
             INSERT INTO "GpuTelemetry" ("gpuId", "nodeId", "at", "smPct", "memoryUsedMiB", "powerW", "idleSince")
             SELECT u.g, u.n, $3::timestamp(3), u.s, u.m, u.p, u.i FROM unnest($1::text[], $2::text[], $4::float8[], $5::int[], $6::float8[], $7::timestamp(3)[])
               AS u(g, n, s, m, p, i)
             ON CONFLICT ("gpuId") DO UPDATE SET "nodeId" = excluded."nodeId", "at" = excluded."at", "smPct" = excluded."smPct",
               "memoryUsedMiB" = excluded."memoryUsedMiB", "powerW" = excluded."powerW", "idleSince" = excluded."idleSince"
             -- a GPU whose state did not change keeps its row (and "at", when that state was first
             -- sampled) and gets no raw sample: at 80,000 mostly idle GPUs, tens of thousands of rows a tick fewer
             WHERE ("GpuTelemetry"."nodeId", "GpuTelemetry"."smPct", "GpuTelemetry"."memoryUsedMiB", "GpuTelemetry"."powerW", "GpuTelemetry"."idleSince")
               IS DISTINCT FROM (excluded."nodeId", excluded."smPct", excluded."memoryUsedMiB", excluded."powerW", excluded."idleSince")
               -- a state sampled by a later tick stays (checked on the row as locked: also against a tick committed meanwhile)
               AND "GpuTelemetry"."at" <= excluded."at"
             RETURNING "gpuId", "smPct", "memoryUsedMiB", "powerW"
           )
           INSERT INTO "GpuSample" ("gpuId", "at", "smPct", "memoryUsedMiB", "powerW")
           SELECT c."gpuId", $3::timestamp(3), c."smPct", c."memoryUsedMiB", c."powerW" FROM changed c
           ON CONFLICT DO NOTHING`,
          [
            latest.map((l) => l.gpuId),
            latest.map((l) => l.nodeId),
            at,
            latest.map((l) => l.smPct),
            latest.map((l) => l.memoryUsedMiB),
            latest.map((l) => l.powerW),
            latest.map((l) => l.idleSince?.toISOString() ?? null),
          ],
        );
      }

      await addToBuckets((text, values) => tx.execute(text, values), t.buckets, t.deltas);
      return true;
    });
  }

  /** Drops raw samples, tick markers and rollups older than their retention. */
  async prune(cutoffs: { raw: Date; minute: Date; hour: Date }): Promise<number> {
    const db = this.prisma.client;
    const [raw, , minute, hour] = await Promise.all([
      db.gpuSample.deleteMany({ where: { at: { lt: cutoffs.raw } } }),
      db.telemetryTick.deleteMany({ where: { at: { lt: cutoffs.raw } } }),
      db.usageRollup.deleteMany({ where: { AND: [{ stepSeconds: 60 }, { bucket: { lt: cutoffs.minute } }] } }),
      db.usageRollup.deleteMany({ where: { AND: [{ stepSeconds: { in: [3600, 86400] } }, { bucket: { lt: cutoffs.hour } }] } }),
    ]);
    return raw.count + minute.count + hour.count;
  }
}

/** A tick this process wrote: its time and every GPU's latest state as written, by GPU id. */
export interface WrittenTick {
  at: Date;
  latest: ReadonlyMap<string, LatestGpuState>;
}

/**
 * The GPU states in Postgres just before the tick at `at` (an ISO time), as far as they can
 * differ from this process's last tick `since`: its own states, with those that ticks of other
 * writers changed after it (rows whose `at` is later: a state keeps the time it was first
 * sampled) read back over them. One read of the tick markers when no other tick came between.
 */
async function writtenBefore(tx: SqlTx, at: string, since: WrittenTick): Promise<ReadonlyMap<string, LatestGpuState>> {
  const [row] = await tx.query<{ same: boolean | null }>(`SELECT max("at") = $2::timestamp(3) AS same FROM "TelemetryTick" WHERE "at" < $1::timestamp(3)`, [
    at,
    since.at.toISOString(),
  ]);
  if (row?.same === true) return since.latest;
  const theirs = await tx.query<LatestGpuState>(
    `SELECT "gpuId", "nodeId", "smPct", "memoryUsedMiB", "powerW", "idleSince" FROM "GpuTelemetry" WHERE "at" > $1::timestamp(3)`,
    [since.at.toISOString()],
  );
  const merged = new Map(since.latest);
  for (const r of theirs) merged.set(r.gpuId, r);
  return merged;
}

/** The states that differ from those written (a GPU not written then is new: it differs). */
export function changedSince(latest: readonly LatestGpuState[], written: ReadonlyMap<string, LatestGpuState>): LatestGpuState[] {
  return latest.filter((l) => {
    const w = written.get(l.gpuId);
    return (
      !w ||
      w.nodeId !== l.nodeId ||
      w.smPct !== l.smPct ||
      w.memoryUsedMiB !== l.memoryUsedMiB ||
      w.powerW !== l.powerW ||
      (w.idleSince?.getTime() ?? null) !== (l.idleSince?.getTime() ?? null)
    );
  });
}

/** Rows per statement of addToRollups and addToBuckets. */
const ROLLUP_CHUNK = 10_000;

/** Runs one statement with positional parameters in the caller's transaction (typed SQL, or Prisma's). */
export type RunStatement = (text: string, values: unknown[]) => Promise<unknown>;

/** The measures of a rollup, in the order of the statements' columns. */
const MEASURES = ['capacitySeconds', 'allocatedSeconds', 'busySeconds', 'memoryMiBSeconds', 'energyJoules', 'idleSeconds'] as const;

/** The rows of `source` (step, bucket, node, model, tenant, team, measures) summed into the usage rollups: an existing row's measures grow. */
const upsertRollups = (source: string) => `INSERT INTO "UsageRollup" ("stepSeconds", "bucket", "nodeId", "gpuModel", "tenantId", "teamId",
    ${MEASURES.map((m) => `"${m}"`).join(', ')})
  ${source}
  ON CONFLICT ("stepSeconds", "bucket", "nodeId", "gpuModel", "tenantId", "teamId") DO UPDATE SET
    ${MEASURES.map((m) => `"${m}" = "UsageRollup"."${m}" + excluded."${m}"`).join(',\n    ')}`;

/** The array parameters of the delta columns (node, model, tenant, team, measures), numbered from $3. */
const DELTA_ARRAYS = ['text', 'text', 'text', 'text', ...MEASURES.map(() => 'float8')].map((type, i) => `$${3 + i}::${type}[]`).join(', ');

/** The values of DELTA_ARRAYS. */
const deltaColumns = (rows: readonly RollupDelta[]): unknown[] => [
  rows.map((d) => d.nodeId),
  rows.map((d) => d.gpuModel),
  rows.map((d) => d.tenantId),
  rows.map((d) => d.teamId),
  ...MEASURES.map((m) => rows.map((d) => d[m])),
];

/**
 * Adds rollup rows into the usage rollups inside the caller's transaction: a row whose bucket,
 * node, model and holder exist is summed into it (a bucket is filled by many ticks). The rows
 * of one call must have distinct keys.
 */
export async function addToRollups(run: RunStatement, rows: readonly RollupRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += ROLLUP_CHUNK) {
    const chunk = rows.slice(i, i + ROLLUP_CHUNK);
    await run(upsertRollups(`SELECT * FROM unnest($1::int[], $2::timestamp(3)[], ${DELTA_ARRAYS})`), [
      chunk.map((d) => d.stepSeconds),
      chunk.map((d) => d.bucket.toISOString()),
      ...deltaColumns(chunk),
    ]);
  }
}

/**
 * Adds every delta into each of the buckets (a tick's minute, hour and day), as addToRollups
 * would: the deltas' columns are sent once and crossed with the buckets in Postgres (at 10,000
 * nodes, 10,000 deltas: not 30,000 rows built, serialised and sent). The deltas must have
 * distinct keys, the buckets distinct steps.
 */
export async function addToBuckets(
  run: RunStatement,
  buckets: readonly { stepSeconds: number; bucket: Date }[],
  deltas: readonly RollupDelta[],
): Promise<void> {
  if (!buckets.length) return;
  const per = Math.max(1, Math.floor(ROLLUP_CHUNK / buckets.length));
  for (let i = 0; i < deltas.length; i += per) {
    await run(upsertRollups(`SELECT b.s, b.t, u.* FROM unnest($1::int[], $2::timestamp(3)[]) AS b(s, t) CROSS JOIN unnest(${DELTA_ARRAYS}) AS u`), [
      buckets.map((b) => b.stepSeconds),
      buckets.map((b) => b.bucket.toISOString()),
      ...deltaColumns(deltas.slice(i, i + per)),
    ]);
  }
}
