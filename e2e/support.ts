import { readFileSync } from 'node:fs';
import { createGantryClient, type GantryClient } from '@gantry/sdk';
import { expect, type Page } from '@playwright/test';

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

/** The platform admin's key scripts/e2e.sh made for this run. */
export function adminKey(): string {
  const k = process.env.E2E_ADMIN_KEY;
  if (!k) throw new Error('E2E_ADMIN_KEY is not set: run through scripts/e2e.sh');
  return k;
}

/** Signs in to the console; a click before hydration is lost on a busy machine, so it retries until the console shows. */
export async function signIn(page: Page, key: string): Promise<void> {
  await page.goto('/login');
  await expect(async () => {
    await page.getByTestId('login-api-key').fill(key);
    await page.getByTestId('login-submit').click();
    await expect(page.getByTestId('nav-cluster')).toBeVisible({ timeout: 5_000 });
  }).toPass({ timeout: 40_000 });
}
