/**
 * The repository stands alone: a clone has no folder beside it, and no issue tracker a reader of
 * the code can open. Code, tests, scripts and docs must not read or link files outside the
 * repository (the design and the GPU reference are in docs/, the openb trace in
 * packages/bench/data/openb/), and code comments and test names say what the code does rather
 * than which issue asked for it.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { repoRoot } from './scratch-db';

const ROOT = repoRoot();
const SELF = relative(ROOT, __filename).split(sep).join('/');
const SKIP_DIRS = new Set(['node_modules', 'dist', '.next', '.turbo', '.git', '.gantry', 'generated', 'coverage', 'test-results', 'playwright-report']);
const TEXT = new Set(['.ts', '.tsx', '.js', '.cjs', '.mjs', '.json', '.sh', '.md', '.prisma', '.css', '.sql', '.yaml', '.yml', '.toml', '']);
const CODE = new Set(['.ts', '.tsx', '.js', '.cjs', '.mjs', '.json', '.sh', '.prisma', '.css', '.sql']);

/** Tracked files (git), or every file outside build output when there is no git. */
function repositoryFiles(): string[] {
  try {
    const out = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const files = out.split('\0').filter(Boolean);
    if (files.length > 0) return files;
  } catch {
    // not a git checkout: walk the tree
  }
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(join(ROOT, dir))) {
      const rel = dir ? `${dir}/${name}` : name;
      if (statSync(join(ROOT, rel)).isDirectory()) {
        if (!SKIP_DIRS.has(name)) walk(rel);
      } else files.push(rel);
    }
  };
  walk('');
  return files;
}

const files = repositoryFiles().filter((f) => f !== SELF && TEXT.has(extname(f)));
const text = new Map(files.map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]));

/** `file:line: text` for every line of the given files that matches. */
function offenders(pattern: RegExp, only: (file: string) => boolean = () => true): string[] {
  const found: string[] = [];
  for (const [file, body] of text) {
    if (!only(file)) continue;
    body.split('\n').forEach((line, i) => {
      if (pattern.test(line)) found.push(`${file}:${i + 1}: ${line.trim().slice(0, 160)}`);
    });
  }
  return found;
}

// Built from pieces so that this file does not match itself if it is ever scanned.
// The folder beside the repository holds data/, tools/, reference/, seeds/ and its notes; the
// driver's own src/shared/ is inside the repository and fine.
const OUTSIDE = new RegExp(
  ['\\.\\./shared/(?:data|tools|reference|seeds|hooks|[A-Z]+\\.md)\\b', '/work/' + 'shared\\b', '\\bDESIGN' + '\\.md\\b', '\\bREFERENCE' + '\\.md\\b'].join(
    '|',
  ),
);
const ISSUE_NUMBER = new RegExp('\\bissues?' + '\\s*#?\\d+\\b', 'i');

describe('the repository is self-contained', () => {
  it('scans the tracked sources, tests, scripts and docs', () => {
    for (const dir of ['apps/', 'packages/', 'scripts/', 'e2e/', 'docs/', 'prisma/']) {
      expect(files.some((f) => f.startsWith(dir))).toBe(true);
    }
  });

  it('nothing reads or links files outside the repository (the folder beside it, its design or reference notes)', () => {
    expect(offenders(OUTSIDE)).toEqual([]);
  });

  it('code, tests and scripts cite no issue numbers', () => {
    expect(offenders(ISSUE_NUMBER, (f) => CODE.has(extname(f)))).toEqual([]);
  });

  it('the patterns catch what they are meant to', () => {
    expect(OUTSIDE.test("join(__dirname, '../../../../shared/data/openb')")).toBe(true);
    expect(OUTSIDE.test('see DESIGN' + '.md section 4')).toBe(true);
    expect(OUTSIDE.test('see docs/design.md section 4')).toBe(false);
    expect(ISSUE_NUMBER.test('Telemetry (issue ' + '6): rollups')).toBe(true);
    expect(ISSUE_NUMBER.test('// Issue #' + '12: quotas')).toBe(true);
    expect(ISSUE_NUMBER.test('parsed.error.issues.map((i) => i.message)')).toBe(false);
  });
});
