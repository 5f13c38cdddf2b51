import { Injectable } from '@nestjs/common';
import type { AnyTx } from '../../common/any-tx';
import { insertAll, sqlTime, type Column } from '../../common/bulk-insert';
import { newId } from '../../common/ids';

export interface NewEvent {
  tenantId: string | null;
  jobId?: string;
  nodeId?: string;
  bareMetalLeaseId?: string;
  type: string;
  message: string;
  data?: Record<string, unknown>;
}

/** The columns of an Event row (insertAll). */
export const EVENT_COLUMNS: Column<NewEvent & { id: string; createdAt: Date }>[] = [
  { name: 'id', type: 'text', value: (e) => e.id },
  { name: 'tenantId', type: 'text', value: (e) => e.tenantId },
  { name: 'jobId', type: 'text', value: (e) => e.jobId ?? null },
  { name: 'nodeId', type: 'text', value: (e) => e.nodeId ?? null },
  { name: 'bareMetalLeaseId', type: 'text', value: (e) => e.bareMetalLeaseId ?? null },
  { name: 'type', type: 'text', value: (e) => e.type },
  { name: 'message', type: 'text', value: (e) => e.message },
  { name: 'data', type: 'text', cast: 'jsonb', value: (e) => JSON.stringify(e.data ?? {}) },
  { name: 'createdAt', type: 'timestamp(3)', value: (e) => sqlTime(e.createdAt) },
];

/** Appends events inside the caller's transaction, so a fact and its event land together (one typed-SQL statement). */
@Injectable()
export class EventsRepository {
  async append(tx: AnyTx, e: NewEvent | NewEvent[]): Promise<void> {
    const rows = Array.isArray(e) ? e : [e];
    if (!rows.length) return;
    await insertAll(tx, 'Event', EVENT_COLUMNS, newEventRows(rows));
  }
}

/** Event rows as inserted: each an id in time order and the time (now). */
export function newEventRows(rows: readonly NewEvent[], now = new Date()): (NewEvent & { id: string; createdAt: Date })[] {
  return rows.map((r) => ({ ...r, id: newId(now.getTime()), createdAt: now }));
}
