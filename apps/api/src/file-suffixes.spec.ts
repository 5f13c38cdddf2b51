import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * File names tell what a file holds: a Nest provider (anything @Injectable) lives in a file named
 * `<name>.<role>.ts` with its role among these; pure modules (rules, formats, types) are plain
 * kebab-case names.
 */
const ROLES = [
  'service',
  'repository',
  'controller',
  'processor',
  'guard',
  'interceptor',
  'filter',
  'pipe',
  'scheduler',
  'monitor',
  'loop',
  'source',
  'store',
  'validator',
  'host',
  'publisher',
  'recorder',
];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') && !p.endsWith('.spec.ts') ? [p] : [];
  });
}

describe('file suffixes', () => {
  it('names every injectable provider <name>.<role>.ts', () => {
    const wrong = files(__dirname)
      .filter((f) => /@Injectable\(\)/.test(readFileSync(f, 'utf8')))
      .filter((f) => !ROLES.some((r) => f.endsWith(`.${r}.ts`)))
      .map((f) => relative(__dirname, f));
    expect(wrong).toEqual([]);
  });
});
