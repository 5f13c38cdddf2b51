import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { PrismaService } from './prisma.service';

/** What a claim found when the key was already held. */
export interface IdempotencyRecordView {
  state: 'pending' | 'done';
  bodyHash: string;
  status: number | null;
  body: unknown;
}

export type ClaimResult = { claimed: true; token: string } | { claimed: false; record: IdempotencyRecordView | undefined };

/**
 * `Idempotency-Key` records of the `@Idempotent()` creating POSTs (IdempotencyRecord), one per
 * scope (caller, method, path) and key. Each claim writes a new `id`, the claim's token: only
 * the request holding it may record its answer or release the key, so a request that outlived
 * its claim (taken over as stale) cannot overwrite or free its successor's record.
 */
@Injectable()
export class IdempotencyRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Claims (scope, key) for one request in one statement, relying on the unique (scope, key):
   * inserts a pending record, or takes over an existing one atomically when it has expired or
   * is a pending record created at or before `staleBefore` (ON CONFLICT ... DO UPDATE ... WHERE
   * re-checks the condition on the locked row, so two retries cannot both take it over).
   * Otherwise returns the record that holds the key (undefined if it vanished meanwhile).
   */
  async claim(c: { scope: string; key: string; bodyHash: string; now: Date; expiresAt: Date; staleBefore: Date }): Promise<ClaimResult> {
    const token = randomUUID();
    const won = await this.prisma.client.$queryRaw<{ id: string }[]>`
      INSERT INTO "IdempotencyRecord" ("id", "scope", "key", "bodyHash", "state", "createdAt", "expiresAt")
      VALUES (${token}, ${c.scope}, ${c.key}, ${c.bodyHash}, 'pending', ${c.now}::timestamp(3), ${c.expiresAt}::timestamp(3))
      ON CONFLICT ("scope", "key") DO UPDATE SET "id" = excluded."id", "bodyHash" = excluded."bodyHash", "state" = 'pending',
        "status" = NULL, "body" = NULL, "createdAt" = excluded."createdAt", "expiresAt" = excluded."expiresAt"
      WHERE "IdempotencyRecord"."expiresAt" <= ${c.now}::timestamp(3)
         OR ("IdempotencyRecord"."state" = 'pending' AND "IdempotencyRecord"."createdAt" <= ${c.staleBefore}::timestamp(3))
      RETURNING "id"`;
    if (won.length === 1) return { claimed: true, token };
    const row = await this.prisma.client.idempotencyRecord.findUnique({
      where: { scope_key: { scope: c.scope, key: c.key } },
      select: { state: true, bodyHash: true, status: true, body: true },
    });
    return { claimed: false, record: row ? { ...row, state: row.state === 'done' ? 'done' : 'pending' } : undefined };
  }

  /** Records the first answer (JSON as sent). False when the claim was taken over meanwhile. */
  async complete(token: string, status: number, body: unknown): Promise<boolean> {
    const json = JSON.stringify(body) ?? null;
    const n = await this.prisma.client.$executeRaw`
      UPDATE "IdempotencyRecord" SET "state" = 'done', "status" = ${status}, "body" = ${json}::json
      WHERE "id" = ${token} AND "state" = 'pending'`;
    return n === 1;
  }

  /** Frees the key after a failed first request (only if this claim still holds it). */
  async release(token: string): Promise<void> {
    await this.prisma.client.idempotencyRecord.deleteMany({ where: { AND: [{ id: token }, { state: 'pending' }] } });
  }

  /**
   * Deletes up to `limit` records expired at `now` (index on expiresAt; rows locked by a
   * concurrent claim are skipped, and the outer condition is re-checked on a taken-over row).
   */
  async purgeExpired(now: Date, limit: number): Promise<number> {
    return this.prisma.client.$executeRaw`
      DELETE FROM "IdempotencyRecord" WHERE "expiresAt" <= ${now}::timestamp(3) AND "id" IN (
        SELECT "id" FROM "IdempotencyRecord" WHERE "expiresAt" <= ${now}::timestamp(3)
        ORDER BY "expiresAt" LIMIT ${limit} FOR UPDATE SKIP LOCKED)`;
  }
}
