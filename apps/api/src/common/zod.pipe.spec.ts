import { ZJobCreate } from '@gantry/contracts';
import { DomainError } from './errors';
import { parseOr400 } from './zod.pipe';
import { toEnvelope } from './error.filter';

const valid = { teamId: 't', name: 'n', kind: 'training', resources: { gpus: 1 } };

describe('request validation', () => {
  it.each([
    ['a missing kind', { ...valid, kind: undefined }, 'kind'],
    ['a negative GPU count', { ...valid, resources: { gpus: -1 } }, 'resources.gpus'],
    ['a name with spaces', { ...valid, name: 'my job' }, 'name'],
    ['no resource kind at all', { ...valid, resources: { cpuMilli: 1000 } }, 'resources'],
    ['an unknown top-level field', { ...valid, colour: 'red' }, '(body)'],
  ])('rejects %s with a 400 naming the field', (_n, body, wantField) => {
    try {
      parseOr400(ZJobCreate, body);
      throw new Error('expected a validation error');
    } catch (e) {
      expect(e).toBeInstanceOf(DomainError);
      const { status, body: env } = toEnvelope(e);
      expect(status).toBe(400);
      expect(env.error.code).toBe('validation_failed');
      expect((env.error.details as { field: string }[]).map((d) => d.field)).toContain(wantField);
      expect(env.error.message.startsWith(wantField)).toBe(true);
    }
  });

  it('rejects a body that is not an object', () => {
    expect(() => parseOr400(ZJobCreate, [1, 2])).toThrow('request body must be a JSON object');
  });

  it('fills defaults for what a valid request leaves out', () => {
    expect(parseOr400(ZJobCreate, valid)).toMatchObject({ priority: 'normal', replicas: 1, topology: { level: 'any', required: false } });
  });

  it('maps unknown errors to a 500 envelope without leaking the message', () => {
    expect(toEnvelope(new Error('db password is hunter2'))).toEqual({
      status: 500,
      body: { error: { code: 'internal', message: 'internal error', details: [] } },
    });
  });
});
