// Drops the run's database and every per-system copy still left (a system whose teardown
// could not finish), and deletes the run's Redis keys. Each step is bounded and runs whatever
// the others did, so the run always ends clean or says loudly what it could not clean.
const path = require('node:path');
const { Client } = require(require.resolve('pg', { paths: [path.join(__dirname, '..', '..', '..', 'prisma')] }));
const { Redis } = require('ioredis');

const STEP_MS = 30_000;

function within(what, p) {
  let timer;
  const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not finish within ${STEP_MS} ms`)), STEP_MS)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

async function dropDatabases() {
  const url = new URL(process.env.DATABASE_URL);
  const run = decodeURIComponent(url.pathname.slice(1));
  if (!/^gantry_test_[A-Za-z0-9_]+$/.test(run)) throw new Error(`refusing to drop "${run}": not a test run's database`);
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString(), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    // The copies (<run>_<suffix>) first: they were made from the run's database as a template.
    const { rows } = await client.query("SELECT datname FROM pg_database WHERE datname LIKE $1 || '\\_%' ORDER BY datname", [run]);
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    await client.query(`DROP DATABASE IF EXISTS "${run}" WITH (FORCE)`);
    if (rows.length) console.warn(`global teardown: dropped ${rows.length} test database(s) a system left behind`);
  } finally {
    await client.end();
  }
}

async function deleteQueueKeys() {
  const redis = new Redis(process.env.REDIS_URL || 'redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${process.env.GANTRY_QUEUE_PREFIX}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

module.exports = async () => {
  const failures = [];
  for (const [what, step] of [
    ['dropping the test databases', dropDatabases],
    ['deleting the test queue keys', deleteQueueKeys],
  ]) {
    await within(what, step()).catch((e) => failures.push(e.message));
  }
  if (failures.length) throw new Error(`global teardown: ${failures.join('; ')}`);
};
