import { isUniqueViolation } from './prisma-errors';

describe('isUniqueViolation', () => {
  it('knows a unique violation from a Prisma model write, typed SQL and a raw statement in a transaction', () => {
    expect(isUniqueViolation({ code: 'P2002' })).toBe(true);
    expect(isUniqueViolation({ code: '23505' })).toBe(true);
    // what Prisma 7 throws for $queryRaw over the pg adapter (seen on an INSERT of a taken key)
    expect(
      isUniqueViolation({
        code: 'P2010',
        meta: { driverAdapterError: { name: 'DriverAdapterError', cause: { originalCode: '23505', kind: 'UniqueConstraintViolation' } } },
      }),
    ).toBe(true);
  });

  it('is false for other failures of a raw statement and for anything else', () => {
    expect(isUniqueViolation({ code: 'P2010', meta: { driverAdapterError: { cause: { originalCode: '23503' } } } })).toBe(false);
    expect(isUniqueViolation({ code: 'P2010' })).toBe(false);
    expect(isUniqueViolation(new Error('boom'))).toBe(false);
    expect(isUniqueViolation(null)).toBe(false);
  });
});
