import { toEnvelope } from './error.filter';
import { DomainError } from './errors';

describe('error envelope', () => {
  it('turns a database that is out of reach or out of connections into 503 unavailable (retry), not 500', () => {
    for (const e of [
      Object.assign(new Error('Transaction API error: Unable to start a transaction in the given time.'), { code: 'P2028' }),
      Object.assign(new Error('Timed out fetching a new connection from the connection pool'), { code: 'P2024' }),
      new Error('Connection terminated unexpectedly'),
      Object.assign(new Error('driver adapter error'), { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }) }),
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    ]) {
      expect(toEnvelope(e)).toEqual({ status: 503, body: { error: { code: 'unavailable', message: expect.stringMatching(/retry/), details: [] } } });
    }
  });

  it('keeps other failures a 500 that reveals nothing', () => {
    expect(toEnvelope(new TypeError('x is undefined'))).toEqual({ status: 500, body: { error: { code: 'internal', message: 'internal error', details: [] } } });
    expect(toEnvelope(Object.assign(new Error('unique'), { code: 'P2002' })).status).toBe(500);
  });

  it('gives a domain error its own status and code', () => {
    expect(toEnvelope(new DomainError('quota_exceeded', 'too much', [{ field: 'resources', problem: 'x' }])).status).toBe(409);
  });
});
