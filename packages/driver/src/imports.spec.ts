/**
 * Keeps the driver package's import boundaries: it reads GPU facts from the catalog in
 * @gantry/contracts and imports nothing from the placement engine (@gantry/scheduler); the
 * simulated and Kubernetes drivers do not import each other (what they share lives in shared/,
 * which imports neither of them nor the remote driver).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const ROOT = resolve(__dirname, '..');
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'dist' ? [] : sourceFiles(path);
    return /\.(ts|tsx|js|cjs|mjs)$/.test(e.name) ? [path] : [];
  });
}

/** Module specifiers of static imports, re-exports, `import x = require()`, `require()` and `import()`. */
function specifiers(text: string): string[] {
  const out: string[] = [];
  const patterns = [
    /\b(?:import|export)\s+(?:type\s+)?[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\b(?:require|import)\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const re of patterns) for (const m of text.matchAll(re)) out.push(m[1]!);
  return out;
}

/** The driver area a file or resolved import lies in: simulated, kubernetes, remote, shared, or '' (src itself). */
function areaOf(path: string): string {
  const rel = relative(SRC, path);
  if (rel.startsWith('..')) return '(outside src)';
  const parts = rel.split(sep);
  return parts.length > 1 ? parts[0]! : '';
}

interface Edge {
  file: string;
  from: string;
  to: string;
  specifier: string;
}

function edges(): Edge[] {
  const files = [...sourceFiles(SRC), ...sourceFiles(join(ROOT, 'scripts'))];
  return files.flatMap((file) =>
    specifiers(readFileSync(file, 'utf8')).map((specifier) => ({
      file: relative(ROOT, file),
      from: areaOf(file),
      to: specifier.startsWith('.') ? areaOf(resolve(dirname(file), specifier)) : specifier,
      specifier,
    })),
  );
}

const FORBIDDEN: Record<string, string[]> = {
  simulated: ['kubernetes'],
  kubernetes: ['simulated'],
  shared: ['simulated', 'kubernetes', 'remote'],
};

describe('driver import boundaries', () => {
  const all = edges();

  it('the scan sees the imports it is meant to check', () => {
    expect(all.length).toBeGreaterThan(100);
    expect(all).toContainEqual(expect.objectContaining({ file: 'src/simulated/simulated-driver.ts', to: 'shared', specifier: '../shared/mig-layout' }));
    expect(all).toContainEqual(expect.objectContaining({ from: 'kubernetes', to: 'shared' }));
    expect(specifiers("import type { A } from '@x/y';\nexport * from './z';\nconst q = require('w');")).toEqual(['@x/y', './z', 'w']);
  });

  it('nothing imports the placement engine (@gantry/scheduler)', () => {
    const bad = all.filter((e) => e.specifier === '@gantry/scheduler' || e.specifier.startsWith('@gantry/scheduler/'));
    expect(bad.map((e) => `${e.file}: ${e.specifier}`)).toEqual([]);
  });

  it('the package does not depend on @gantry/scheduler', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    const deps = ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'].flatMap((k) => Object.keys(pkg[k] ?? {}));
    expect(deps).not.toContain('@gantry/scheduler');
  });

  it('simulated/ and kubernetes/ do not import each other; shared/ imports neither (nor remote/)', () => {
    const bad = all.filter((e) => FORBIDDEN[e.from]?.includes(e.to));
    expect(bad.map((e) => `${e.file} (${e.from}) -> ${e.specifier} (${e.to})`)).toEqual([]);
  });
});
