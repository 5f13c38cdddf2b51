/**
 * Prisma CLI config: migrations run through Prisma's WASM schema engine over the pg driver
 * adapter, so `migrate deploy` needs no native binary download (air-gapped clusters too).
 * See docs/adr/0001-prisma-wasm-migrations.md.
 */
import { defineConfig } from 'prisma/config';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';

/** Postgres catalog types the pg adapter cannot decode (https://github.com/prisma/prisma/issues/27403): read them as text. */
const CATALOG_TYPES_AS_TEXT = new Set([18, 19, 22, 24, 28, 30, 194, 1002, 1003, 1033, 2205, 2206, 2277, 3220]);
const TEXT = 25;

class CatalogSafePool extends pg.Pool {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: any[]): any {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const result = (super.query as any)(...args);
    if (!result || typeof result.then !== 'function') return result;
    return result.then((res: pg.QueryResult) => {
      for (const f of res?.fields ?? []) if (CATALOG_TYPES_AS_TEXT.has(f.dataTypeID)) f.dataTypeID = TEXT;
      return res;
    });
  }
}

/** Separate fields, not a connection string: a connection string would override the shadow database name. */
function poolConfig(): pg.PoolConfig {
  const url = new URL(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/gantry');
  return {
    host: url.hostname,
    port: Number(url.port || 5432),
    user: decodeURIComponent(url.username || 'postgres'),
    password: url.password ? decodeURIComponent(url.password) : undefined,
    database: url.pathname.replace(/^\//, '') || 'gantry',
  };
}

export default defineConfig({
  schema: 'schema.prisma',
  migrations: { path: 'migrations' },
  experimental: { adapter: true },
  engine: 'js',
  adapter: async () => new PrismaPg(new CatalogSafePool(poolConfig()) as pg.Pool),
});
