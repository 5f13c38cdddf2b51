import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { client, demoKey } from '../support';

async function signIn(page: Page, key: string) {
  await page.goto('/login');
  await expect(async () => {
    await page.getByTestId('login-api-key').fill(key);
    await page.getByTestId('login-submit').click();
    await expect(page.getByTestId('nav-audit')).toBeVisible({ timeout: 5_000 });
  }).toPass({ timeout: 40_000 });
}

/** A datetime-local value for an instant, in the browser's time zone (the test runs in the same one). */
const local = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

test.describe('console: audit tasks', () => {
  test('a tenant admin narrows the audit log to a time range and exports what it shows as CSV', async ({ page }) => {
    const key = demoKey('tenant admin, Acme AI');
    const api = client(key);
    // a change to find: an endpoint created and deleted by a member of the tenant
    const member = client(demoKey('Max (member)'));
    const me = await member.me();
    const ep = await member.endpoints.create({ teamId: me.teamId!, name: 'audit-range', model: 'm', resources: { gpus: 1, gpuModel: 'A100-80GB' } });
    await member.endpoints.remove(ep.id);

    await signIn(page, key);
    await page.getByTestId('nav-audit').click();
    await page.getByTestId('audit-filter').fill('endpoint');
    await expect(page.locator('[data-testid="audit-row"]').first()).toBeVisible();

    // a range that ended an hour ago holds none of this run's changes; one around now holds them
    const hourAgo = new Date(Date.now() - 3600_000);
    await page.getByTestId('audit-to').fill(local(hourAgo));
    await expect(page.getByTestId('audit-row')).toHaveCount(0);
    await page.getByTestId('audit-from').fill(local(hourAgo));
    await page.getByTestId('audit-to').fill(local(new Date(Date.now() + 3600_000)));
    await expect(page.getByTestId('audit-row').first()).toBeVisible();
    const shown = await page.getByTestId('audit-row').count();
    const fromApi = await api.audit.list({ action: 'endpoint', from: hourAgo.toISOString(), limit: 200 });
    expect(shown).toBe(fromApi.items.length);

    // export: the rows shown, as CSV through the API's writer
    const download = page.waitForEvent('download');
    await page.getByTestId('audit-export').click();
    const file = await (await download).path();
    const lines = readFileSync(file, 'utf8').trim().split(/\r?\n/);
    expect(lines[0]).toBe('created_at,actor,via,api_key_id,user_id,source,action,outcome,target,target_name,changes,data');
    expect(lines.length - 1).toBe(shown);
    expect(lines.slice(1).every((l) => /endpoint/.test(l))).toBe(true);

    // a range that ends before it starts: the API names the field
    const bad = await fetch(
      `${process.env.E2E_API_URL}/v1/audit?from=${encodeURIComponent(new Date().toISOString())}&to=${encodeURIComponent(hourAgo.toISOString())}`,
      {
        headers: { authorization: `Bearer ${key}` },
      },
    );
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { details: { field: string }[] } }).error.details[0]!.field).toBe('from');
  });

  test('an edit shows each changed field before → after, in the table and in the CSV export', async ({ page }) => {
    const key = demoKey('tenant admin, Acme AI');
    const member = client(demoKey('Max (member)'));
    const me = await member.me();
    const name = `audit-diff-${Date.now().toString(36)}`;
    const ep = await member.endpoints.create({ teamId: me.teamId!, name, model: 'm', resources: { gpus: 1, gpuModel: 'A100-80GB' }, maxReplicas: 2 });
    await member.endpoints.update(ep.id, { maxReplicas: 5, targetConcurrency: 40 });

    await signIn(page, key);
    await page.getByTestId('nav-audit').click();
    await page.getByTestId('audit-filter').fill('PATCH /v1/endpoints');
    const row = page.getByTestId('audit-row').filter({ hasText: `endpoint ${name}` });
    await expect(row.getByTestId('audit-change')).toHaveText(['maxReplicas 2 → 5', 'targetConcurrency 100 → 40']);

    const download = page.waitForEvent('download');
    await page.getByTestId('audit-export').click();
    const csv = readFileSync(await (await download).path(), 'utf8');
    expect(csv.split(/\r?\n/).find((l) => l.includes(ep.id))).toContain('maxReplicas 2 → 5; targetConcurrency 100 → 40');
    await member.endpoints.remove(ep.id);
  });
});
