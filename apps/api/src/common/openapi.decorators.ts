import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiQuery, ApiResponse, ApiSecurity } from '@nestjs/swagger';
import { z } from 'zod';
import { ZErrorBody } from '@gantry/contracts';

type JsonSchema = Record<string, unknown>;

/** OpenAPI 3.0 JSON schema of a zod schema (input side for bodies, output side for answers). */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const s = z.toJSONSchema(schema, { target: 'openapi-3.0', io, unrepresentable: 'any' }) as JsonSchema;
  delete s.$schema;
  return s;
}

const ERROR_SCHEMA = jsonSchema(ZErrorBody, 'output');

/** Documents a route: summary, body, query, success answer and the error envelope. */
export function Route(opts: { summary: string; body?: z.ZodType; query?: z.ZodObject; ok?: z.ZodType; status?: number; errors?: number[]; public?: boolean }) {
  const decorators = [
    ApiOperation({ summary: opts.summary }),
    ApiResponse({ status: opts.status ?? 200, schema: opts.ok ? jsonSchema(opts.ok, 'output') : { type: 'object' } }),
    ...(opts.errors ?? [400, 401, 404]).map((status) => ApiResponse({ status, schema: ERROR_SCHEMA })),
  ];
  if (!opts.public) decorators.push(ApiSecurity('apiKey'));
  if (opts.body) decorators.push(ApiBody({ schema: jsonSchema(opts.body, 'input') }));
  for (const [name, field] of Object.entries(opts.query?.shape ?? {})) {
    decorators.push(ApiQuery({ name, required: !(field as z.ZodType).safeParse(undefined).success, schema: jsonSchema(field as z.ZodType, 'input') }));
  }
  return applyDecorators(...decorators);
}
