/** Writes the OpenAPI document (committed as apps/api/openapi.json; the SDK is generated from it). */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { parseConfig } from './config/config';
import { HttpModule } from './app.module';
import { buildOpenApi } from './http';

async function main(): Promise<void> {
  const app = await NestFactory.create(HttpModule.forRoot(parseConfig()), { logger: false, bodyParser: false });
  const doc = buildOpenApi(app);
  const out = process.argv[2] ?? join(__dirname, '..', 'openapi.json');
  writeFileSync(out, JSON.stringify(doc, null, 2) + '\n');
  await app.close();
  console.log(`wrote ${out}`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
