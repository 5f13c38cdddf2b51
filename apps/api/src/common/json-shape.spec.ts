import { checkJsonShape, checkPath, isStorableString, MAX_JSON_DEPTH, toStorableString } from './json-shape';

const nest = (depth: number): unknown => (depth === 0 ? 1 : { a: nest(depth - 1) });

describe('request shape checks (before any interceptor or pipe)', () => {
  it.each([
    { name: 'a plain object', body: { name: 'x', tags: ['a', 'b'], n: 1 } },
    { name: 'nesting at the limit', body: nest(MAX_JSON_DEPTH) },
    { name: 'a surrogate pair (emoji)', body: { name: '😀' } },
    { name: 'scalars', body: 3 },
  ])('accepts $name', ({ body }) => {
    expect(() => checkJsonShape(body)).not.toThrow();
  });

  it.each([
    { name: 'nesting past the limit', body: nest(MAX_JSON_DEPTH + 1), wantField: 'a.'.repeat(MAX_JSON_DEPTH).slice(0, -1) },
    {
      name: 'an array nested 100,000 deep (no stack overflow)',
      body: JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)),
      wantField: '0.'.repeat(MAX_JSON_DEPTH).slice(0, -1),
    },
    { name: 'NUL in a value', body: { name: 'a\u0000b' }, wantField: 'name' },
    { name: 'a lone high surrogate', body: { items: ['ok', '\ud800'] }, wantField: 'items.1' },
    { name: 'a lone low surrogate in a key', body: { ['k\udc00']: 1 }, wantField: '(body)' },
  ])('refuses $name with a 400 naming $wantField', ({ body, wantField }) => {
    try {
      checkJsonShape(body);
      throw new Error('not refused');
    } catch (e) {
      expect(e).toMatchObject({ code: 'validation_failed', details: [{ field: wantField }] });
    }
  });

  it.each([
    { path: '/v1/jobs/abc', wantOk: true },
    { path: '/v1/jobs/%00', wantOk: false },
    { path: '/v1/jobs/%E0%A4%A', wantOk: true }, // badly encoded: left to the router (400)
  ])('path $path -> ok $wantOk', ({ path, wantOk }) => {
    if (wantOk) expect(() => checkPath(path)).not.toThrow();
    else expect(() => checkPath(path)).toThrow('(path)');
  });

  it.each([
    { s: 'plain', want: true },
    { s: '😀', want: true },
    { s: 'a\u0000', want: false },
    { s: '\udc00x', want: false },
  ])('isStorableString($s) = $want, and toStorableString makes it storable', ({ s, want }) => {
    expect(isStorableString(s)).toBe(want);
    expect(isStorableString(toStorableString(s))).toBe(true);
  });
});
