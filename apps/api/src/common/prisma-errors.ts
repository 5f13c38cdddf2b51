/**
 * True when a write was refused because of a unique constraint: Prisma's P2002, Postgres's 23505
 * through typed SQL, or a raw statement in a Prisma transaction (P2010 carrying the driver's 23505).
 */
export function isUniqueViolation(e: unknown): boolean {
  if (typeof e !== 'object' || e === null) return false;
  const err = e as { code?: string; meta?: { driverAdapterError?: { cause?: { originalCode?: string } } } };
  if (err.code === 'P2002' || err.code === '23505') return true;
  return err.code === 'P2010' && err.meta?.driverAdapterError?.cause?.originalCode === '23505';
}

/**
 * Prisma error codes that mean the database is out of reach or out of connections for now
 * (server restarting, pool exhausted, transaction not started in time): the request may be retried.
 */
const UNAVAILABLE_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028']);
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', '57P01', '57P02', '57P03', '53300']);

export function isDatabaseUnavailable(e: unknown): boolean {
  if (typeof e !== 'object' || e === null) return false;
  const err = e as { code?: unknown; cause?: unknown; message?: unknown };
  if (typeof err.code === 'string' && (UNAVAILABLE_CODES.has(err.code) || UNAVAILABLE_ERRNOS.has(err.code))) return true;
  if (
    typeof err.message === 'string' &&
    /Connection terminated|Can't reach database server|timeout exceeded when trying to connect|connection (?:refused|closed)|the database system is (?:starting up|shutting down)/i.test(
      err.message,
    )
  )
    return true;
  return err.cause !== undefined && err.cause !== e && isDatabaseUnavailable(err.cause);
}
