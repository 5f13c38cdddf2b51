#!/usr/bin/env node
/**
 * Creates or drops the database named in DATABASE_URL (connecting to the `postgres`
 * maintenance database of the same server).
 *   node scripts/database.cjs create   # no-op when it exists
 *   node scripts/database.cjs drop
 *   node scripts/database.cjs check    # exit 1 when the server is unreachable
 */
const { Client } = require('pg');

async function main() {
  const action = process.argv[2];
  const url = new URL(process.env.DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/gantry');
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`unsupported database name "${name}"`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString(), connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    if (action === 'check') return;
    const exists = (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount > 0;
    if (action === 'create' && !exists) {
      await client.query(`CREATE DATABASE "${name}"`);
      console.log(`created database ${name}`);
    } else if (action === 'drop' && exists) {
      await client.query(`DROP DATABASE "${name}" WITH (FORCE)`);
      console.log(`dropped database ${name}`);
    } else if (!['create', 'drop'].includes(action)) {
      throw new Error('usage: database.cjs create|drop|check');
    }
  } finally {
    await client.end();
  }
}

main().catch((e) => {
  console.error(`database: ${e.message}`);
  process.exit(1);
});
