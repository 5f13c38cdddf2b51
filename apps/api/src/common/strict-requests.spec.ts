import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as contracts from '@gantry/contracts';
import { z } from 'zod';
import { ZNoBody } from './no-body.interceptor';
import { parseOr400 } from './zod.pipe';

type Schema = {
  type?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
};
type Doc = { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>> };

/** Every object in a JSON schema that lets unknown properties through, by path. */
function openObjects(s: Schema | undefined, path: string): string[] {
  if (!s || typeof s !== 'object') return [];
  const out: string[] = [];
  if (s.type === 'object' && s.properties && s.additionalProperties !== false) out.push(path || '(body)');
  for (const [k, v] of Object.entries(s.properties ?? {})) out.push(...openObjects(v, path ? `${path}.${k}` : k));
  if (s.items) out.push(...openObjects(s.items, `${path}[]`));
  for (const alt of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) out.push(...openObjects(alt, path));
  if (typeof s.additionalProperties === 'object') out.push(...openObjects(s.additionalProperties, `${path}.*`));
  return out;
}

/** Request schemas refuse what they do not know (400 naming it), at every depth: nothing is silently ignored. */
describe('strict request schemas', () => {
  // The committed document is what the API serves (CI fails when it is stale).
  const doc = JSON.parse(readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8')) as Doc;
  const bodies = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => op.requestBody)
      .map(([method, op]) => [`${method.toUpperCase()} ${path}`, op.requestBody!.content['application/json']?.schema] as const),
  );

  it('the document has request bodies to check', () => {
    expect(bodies.length).toBeGreaterThanOrEqual(15);
  });

  it.each(bodies)('%s: every object of the body, nested ones too, is closed (additionalProperties: false)', (_route, schema) => {
    expect(schema).toBeDefined();
    expect(openObjects(schema, '')).toEqual([]);
  });

  const queries = Object.entries(contracts).filter(([name, s]) => name.endsWith('Query') && s instanceof z.ZodObject) as [string, z.ZodObject][];

  it('finds the query schemas of the contracts', () => {
    expect(queries.map(([n]) => n)).toEqual(expect.arrayContaining(['ZPageQuery', 'ZJobListQuery', 'ZUtilizationQuery', 'ZIdleQuery', 'ZAuditQuery']));
  });

  it.each(queries)('%s refuses an unknown parameter, and so does its extension with ZPageQuery', (_name, schema) => {
    const bad = { limitt: '5' };
    expect(() => parseOr400(schema, bad, 'query')).toThrow(/limitt/);
    expect(() => parseOr400(contracts.ZPageQuery.extend(schema.shape), bad, 'query')).toThrow(/limitt/);
  });

  it('a route that takes no body accepts none or {} and refuses fields, naming them', () => {
    expect(parseOr400(ZNoBody, {})).toEqual({});
    expect(() => parseOr400(ZNoBody, { force: true })).toThrow(/force/);
    expect(() => parseOr400(ZNoBody, [1])).toThrow(/JSON object/);
  });
});
