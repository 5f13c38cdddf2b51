import { readFileSync } from 'node:fs';
import { createGantryClient, type GantryClient } from '@gantry/sdk';

export interface DemoKeys {
  tenants: { acme: string; globex: string };
  keys: { who: string; key: string }[];
}

export function demoKeys(): DemoKeys {
  const file = process.env.E2E_KEYS_FILE;
  if (!file) throw new Error('E2E_KEYS_FILE is not set: run the e2e tests through scripts/e2e.sh');
  return JSON.parse(readFileSync(file, 'utf8')) as DemoKeys;
}

/** The key of a demo principal, by a part of its description. */
export function demoKey(who: string): string {
  const k = demoKeys().keys.find((x) => x.who.includes(who));
  if (!k) throw new Error(`no demo key for "${who}"`);
  return k.key;
}

export function client(apiKey: string): GantryClient {
  return createGantryClient({ baseUrl: process.env.E2E_API_URL ?? 'http://127.0.0.1:4100', apiKey });
}

export async function until<T>(fn: () => Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`not met within ${ms} ms`);
}
