/** The repository root and migrated scratch databases for benchmarks that need Postgres. */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

export function repoRoot(): string {
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    if (existsSync(resolve(dir, 'pnpm-workspace.yaml'))) return dir;
    dir = dirname(dir);
  }
  return resolve(__dirname, '../../..');
}

export interface ScratchDatabase {
  /** Unique per run: also used for Redis key prefixes. */
  id: string;
  name: string;
  url: string;
  /** Drops the database; logs instead of throwing. */
  drop(): void;
}

/** Creates `gantry_bench_<label>_<id>` on the server of DATABASE_URL and migrates it as production does. */
export function scratchDatabase(label: string, log: (s: string) => void): ScratchDatabase {
  const prismaDir = resolve(repoRoot(), 'prisma');
  const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const url = new URL(process.env.DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres');
  url.pathname = `/gantry_bench_${label}_${id}`;
  const name = url.pathname.slice(1);
  const env = { ...process.env, DATABASE_URL: url.toString(), CHECKPOINT_DISABLE: '1' };
  const run = (args: string[]) => execFileSync(args[0]!, args.slice(1), { cwd: prismaDir, env, stdio: ['ignore', 'ignore', 'inherit'] });
  run(['node', 'scripts/database.cjs', 'create']);
  run([resolve(prismaDir, 'node_modules/.bin/prisma'), 'migrate', 'deploy']);
  log(`scratch database ${name} migrated`);
  return {
    id,
    name,
    url: url.toString(),
    drop() {
      try {
        run(['node', 'scripts/database.cjs', 'drop']);
      } catch {
        log(`could not drop ${name}`);
      }
    },
  };
}
