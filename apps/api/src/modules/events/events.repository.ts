import { Injectable } from '@nestjs/common';
import type { Tx } from '@gantry/db';

export interface NewEvent {
  tenantId: string | null;
  jobId?: string;
  nodeId?: string;
  bareMetalLeaseId?: string;
  type: string;
  message: string;
  data?: Record<string, unknown>;
}

/** Appends events inside the caller's transaction, so a fact and its event land together. */
@Injectable()
export class EventsRepository {
  async append(tx: Tx, e: NewEvent | NewEvent[]): Promise<void> {
    const rows = Array.isArray(e) ? e : [e];
    if (!rows.length) return;
    await tx.event.createMany({ data: rows.map((r) => ({ ...r, data: (r.data ?? {}) as object })) });
  }
}
