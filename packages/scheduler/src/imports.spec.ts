/**
 * The engine's files import each other without a cycle, type-only imports included (ESLint's
 * import-x/no-cycle, which `pnpm lint` runs, skips `import type`, and a cycle of types is still
 * a tangle: views.ts -> framework.ts -> plugins -> views.ts is the layering this keeps).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const SRC = __dirname;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(e.name) && !/\.spec\.ts$/.test(e.name) ? [path] : [];
  });
}

/** Relative module specifiers of static imports and re-exports (`import type` included). */
export function relativeImports(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\b(?:import|export)\s+(?:type\s+)?[^'";]*?\bfrom\s*['"](\.[^'"]*)['"]/g)) out.push(m[1]!);
  for (const m of text.matchAll(/\bimport\s*['"](\.[^'"]*)['"]/g)) out.push(m[1]!);
  return out;
}

function resolveModule(from: string, spec: string, files: Set<string>): string | undefined {
  const base = resolve(dirname(from), spec);
  return [`${base}.ts`, join(base, 'index.ts')].find((p) => files.has(p));
}

/** Every import cycle of the graph, each as the list of files around it (first file repeated at the end). */
export function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (f: string) => {
    state.set(f, 'open');
    stack.push(f);
    for (const g of graph.get(f) ?? []) {
      if (state.get(g) === 'open') found.push([...stack.slice(stack.indexOf(g)), g]);
      else if (!state.has(g)) visit(g);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of [...graph.keys()].sort()) if (!state.has(f)) visit(f);
  return found;
}

describe('scheduler import graph', () => {
  const files = sourceFiles(SRC);
  const set = new Set(files);
  const graph = new Map(files.map((f) => [f, relativeImports(readFileSync(f, 'utf8')).flatMap((s) => resolveModule(f, s, set) ?? [])]));

  it('reads the imports it is meant to check (type-only ones too)', () => {
    expect(files.length).toBeGreaterThan(15);
    expect(graph.get(join(SRC, 'engine.ts'))).toContain(join(SRC, 'framework.ts'));
    expect(graph.get(join(SRC, 'framework.ts'))).toContain(join(SRC, 'views.ts'));
    expect(relativeImports("import type { A } from './a';\nexport * from '../b';\nimport { c } from '@x/c';")).toEqual(['./a', '../b']);
  });

  it('finds a cycle when there is one', () => {
    const g = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(cycles(g)).toEqual([['a', 'b', 'c', 'a']]);
    expect(
      cycles(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
    ).toEqual([]);
  });

  it('has no import cycle inside packages/scheduler/src', () => {
    expect(cycles(graph).map((c) => c.map((f) => relative(SRC, f)).join(' -> '))).toEqual([]);
  });

  it('keeps plugins off the engine: nothing under plugins/ imports engine.ts or the registry', () => {
    const bad = files
      .filter((f) => relative(SRC, f).startsWith('plugins'))
      .flatMap((f) => (graph.get(f) ?? []).filter((g) => /\/(engine|registry|profiles)\.ts$/.test(g)).map((g) => `${relative(SRC, f)} -> ${relative(SRC, g)}`));
    expect(bad).toEqual([]);
  });
});
