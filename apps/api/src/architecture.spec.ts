import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * Dependencies point one way (docs/ARCHITECTURE.md, "Modules and dependencies"): the relative
 * imports of apps/api/src, folded into folders, form no cycle. A piece two folders share moves
 * down (into the lower one, common/ or a small module of its own); it is never imported both ways.
 */

const SRC = __dirname;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === '__fixtures__' ? [] : sourceFiles(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** Relative specifiers of a file's import and export statements, dynamic imports and requires. */
function relativeImports(text: string): string[] {
  const found: string[] = [];
  const patterns = [
    /^\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"](\.{1,2}\/[^'"]*)['"]/gm,
    /^\s*import\s*['"](\.{1,2}\/[^'"]*)['"]/gm,
    /\b(?:import|require)\s*\(\s*['"](\.{1,2}\/[^'"]*)['"]\s*\)/g,
  ];
  for (const re of patterns) for (const m of text.matchAll(re)) found.push(m[1]!);
  return found;
}

function resolveImport(from: string, spec: string): string | null {
  const base = resolve(dirname(from), spec.replace(/\.js$/, ''));
  for (const candidate of [`${base}.ts`, join(base, 'index.ts'), base]) if (existsSync(candidate) && candidate.endsWith('.ts')) return candidate;
  return null;
}

/** `modules/<name>` for a module's files, the first folder for the others, `(root)` for src/*.ts. */
function folderOf(file: string): string {
  const parts = relative(SRC, file).split(sep);
  if (parts.length === 1) return '(root)';
  return parts[0] === 'modules' ? `modules/${parts[1]}` : parts[0]!;
}

type Graph = Map<string, Map<string, string[]>>;

/** Folder graph: folder -> imported folder -> the imports that make the edge (`file -> specifier`). */
function folderGraph(files: string[], keep: (folder: string) => boolean): Graph {
  const graph: Graph = new Map();
  for (const file of files) {
    const from = folderOf(file);
    if (!keep(from)) continue;
    if (!graph.has(from)) graph.set(from, new Map());
    for (const spec of relativeImports(readFileSync(file, 'utf8'))) {
      const target = resolveImport(file, spec);
      if (!target) throw new Error(`${relative(SRC, file)}: cannot resolve import '${spec}'`);
      const to = folderOf(target);
      if (to === from || !keep(to)) continue;
      const edges = graph.get(from)!;
      edges.set(to, [...(edges.get(to) ?? []), `${relative(SRC, file)} -> ${spec}`]);
    }
  }
  return graph;
}

/** Every cycle as its shortest loop through each strongly connected group, with the imports of each step. */
function cycles(graph: Graph): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);

  return groups.map((group) => {
    const inGroup = new Set(group);
    const start = group[0]!;
    // shortest loop start -> ... -> start inside the group (breadth first)
    const prev = new Map<string, string>();
    const queue = [start];
    let last: string | undefined;
    while (queue.length && !last) {
      const v = queue.shift()!;
      for (const w of [...(graph.get(v)?.keys() ?? [])].sort()) {
        if (!inGroup.has(w)) continue;
        if (w === start) {
          last = v;
          break;
        }
        if (!prev.has(w)) {
          prev.set(w, v);
          queue.push(w);
        }
      }
    }
    const loop = [start];
    for (let v = last!; v !== start; v = prev.get(v)!) loop.splice(1, 0, v);
    loop.push(start);
    const steps = loop.slice(0, -1).map(
      (v, i) =>
        `    ${v} -> ${loop[i + 1]}: ${graph
          .get(v)!
          .get(loop[i + 1]!)!
          .join(', ')}`,
    );
    const mutual = group.flatMap((v) => group.filter((w) => v < w && graph.get(v)?.has(w) && graph.get(w)?.has(v)).map((w) => `${v} <-> ${w}`));
    const others = group.filter((g) => !loop.includes(g));
    return [
      `${loop.join(' -> ')}${others.length ? ` (the group also holds ${others.join(', ')})` : ''}`,
      ...steps,
      ...(mutual.length > 1 || (mutual.length === 1 && loop.length > 3) ? [`    both ways: ${mutual.join(', ')}`] : []),
    ].join('\n');
  });
}

describe('dependencies point one way', () => {
  const files = sourceFiles(SRC);

  it('reads the imports it checks', () => {
    expect(relativeImports("import { a } from './a';\nexport { b } from '../b';\nimport type {\n  C,\n} from './c';\nimport './d';")).toEqual([
      './a',
      '../b',
      './c',
      './d',
    ]);
    const graph = folderGraph(files, () => true);
    expect(graph.get('modules/jobs')?.has('common')).toBe(true);
    expect(graph.get('(root)')?.has('modules/jobs')).toBe(true);
  });

  it('names a cycle when there is one', () => {
    const graph: Graph = new Map([
      ['modules/a', new Map([['modules/b', ['modules/a/x.ts -> ../b/y']]])],
      ['modules/b', new Map([['modules/a', ['modules/b/y.ts -> ../a/x']]])],
    ]);
    expect(cycles(graph)).toEqual([
      'modules/a -> modules/b -> modules/a\n    modules/a -> modules/b: modules/a/x.ts -> ../b/y\n    modules/b -> modules/a: modules/b/y.ts -> ../a/x',
    ]);
  });

  it('no two modules import each other, directly or through others (their specs included)', () => {
    const found = cycles(folderGraph(files, (f) => f.startsWith('modules/')));
    if (found.length) throw new Error(`modules that import each other:\n${found.join('\n')}`);
  });

  it('no two folders of the API import each other (common, config, queues, worker, driver, invariants, modules, ...)', () => {
    const code = files.filter((f) => !/\.spec\.ts$/.test(f));
    const found = cycles(folderGraph(code, () => true));
    if (found.length) throw new Error(`folders that import each other:\n${found.join('\n')}`);
  });
});
