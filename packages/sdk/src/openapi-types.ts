/**
 * Types of the committed OpenAPI document (apps/api/openapi.json), generated into
 * src/generated/schema.ts by openapi-typescript on every build.
 */
import type { paths } from './generated/schema';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The JSON body of a route's success answer, as the OpenAPI document describes it. */
export type ResponseOf<P extends keyof paths, M extends Method> = paths[P][M] extends {
  responses: infer R;
}
  ? R extends { 200: { content: { 'application/json': infer B } } }
    ? B
    : R extends { 201: { content: { 'application/json': infer B } } }
      ? B
      : R extends { 202: { content: { 'application/json': infer B } } }
        ? B
        : never
  : never;

/** The JSON request body of a route. */
export type RequestOf<P extends keyof paths, M extends Method> = paths[P][M] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

export type { paths };
