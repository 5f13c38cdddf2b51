// Makes a fresh database (migrated by Prisma, as in production) and a Redis key prefix for
// this test run, so tests never touch development data. Dropped by global-teardown.
const { execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const path = require('node:path');

module.exports = async () => {
  const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const base = new URL(process.env.GANTRY_TEST_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres');
  base.pathname = `/gantry_test_${id}`;
  process.env.DATABASE_URL = base.toString();
  process.env.GANTRY_QUEUE_PREFIX = `gantry-test-${id}`;
  process.env.CHECKPOINT_DISABLE = '1';
  const prismaDir = path.join(__dirname, '..', '..', '..', 'prisma');
  const run = (args) => execFileSync(args[0], args.slice(1), { cwd: prismaDir, env: process.env, stdio: ['ignore', 'ignore', 'inherit'] });
  run(['node', 'scripts/database.cjs', 'create']);
  run([path.join(prismaDir, 'node_modules', '.bin', 'prisma'), 'migrate', 'deploy']);
};
