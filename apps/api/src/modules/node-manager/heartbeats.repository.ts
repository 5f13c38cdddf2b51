import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../common/prisma.service';

/**
 * The last heartbeat of each node, recorded by the health monitor (one statement for all nodes,
 * into NodeHeartbeat: a write that leaves the Node rows, and so the cluster change log, alone).
 */
@Injectable()
export class HeartbeatsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async touchHeartbeats(names: string[], at: Date): Promise<void> {
    if (!names.length) return;
    await this.prisma.sql.query(
      // rows in id order: the workers' flushes lock them in the same order (no deadlock between them)
      `INSERT INTO "NodeHeartbeat" ("nodeId", "at")
       SELECT n.id, $2::timestamptz AT TIME ZONE 'UTC' FROM "Node" n WHERE n.name = ANY($1::text[]) ORDER BY n.id
       ON CONFLICT ("nodeId") DO UPDATE SET "at" = excluded."at" WHERE "NodeHeartbeat"."at" < excluded."at"`,
      [names, at.toISOString()],
    );
  }

  /** Nodes Postgres holds as up and powered on: each of them should be sending heartbeats. */
  async expectedToBeat(): Promise<string[]> {
    const rows = await this.prisma.sql.query<{ name: string }>(`SELECT name FROM "Node" WHERE state IN ('ready', 'cordoned') AND "powerState" = 'on'`);
    return rows.map((r) => r.name);
  }
}
