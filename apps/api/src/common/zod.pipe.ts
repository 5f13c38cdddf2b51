import type { PipeTransform } from '@nestjs/common';
import type { z } from 'zod';
import { DomainError } from './errors';

/** Validates a body or query with a zod schema; a 400 names every bad field. */
export class ZodPipe<T extends z.ZodType> implements PipeTransform<unknown, z.output<T>> {
  constructor(
    private readonly schema: T,
    private readonly where: 'body' | 'query' = 'body',
  ) {}

  transform(value: unknown): z.output<T> {
    return parseOr400(this.schema, value, this.where);
  }
}

export function parseOr400<T extends z.ZodType>(schema: T, value: unknown, where: 'body' | 'query' = 'body'): z.output<T> {
  if (where === 'body' && (value === undefined || value === null || typeof value !== 'object' || Array.isArray(value))) {
    throw new DomainError('validation_failed', 'request body must be a JSON object', [{ field: '(body)', problem: 'expected a JSON object' }]);
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const details = result.error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    const unknown = issue.code === 'unrecognized_keys' ? ` (${(issue as { keys: string[] }).keys.join(', ')})` : '';
    return { field: path || (where === 'body' ? '(body)' : '(query)'), problem: `${issue.message}${unknown}` };
  });
  const first = details[0]!;
  throw new DomainError('validation_failed', `${first.field}: ${first.problem}`, details);
}
