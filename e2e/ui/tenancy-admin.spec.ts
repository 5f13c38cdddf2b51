import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { client, demoKey, demoKeys } from '../support';

/** Tenancy administration in the console: password sign-in, quotas with usage bars, API keys, audit log. */
interface DemoUser {
  who: string;
  email: string;
  password: string;
}
function demoUser(who: string): DemoUser {
  const file = process.env.E2E_KEYS_FILE!;
  const users = (JSON.parse(readFileSync(file, 'utf8')) as { users?: DemoUser[] }).users ?? [];
  const u = users.find((x) => x.who.includes(who));
  if (!u) throw new Error(`no demo user "${who}" in ${file}`);
  return u;
}

async function signInWithPassword(page: Page, who: string) {
  const u = demoUser(who);
  await page.goto('/login');
  await page.getByTestId('login-email').fill(u.email);
  await page.getByTestId('login-password').fill(u.password);
  await page.getByTestId('login-password-submit').click();
  await expect(page.getByTestId('whoami-role')).toContainText('session');
  return u;
}

async function researchTeamId(): Promise<string> {
  const me = await client(demoKey('Ada (team admin)')).me();
  return me.teamId!;
}

test.describe('tenancy administration (console)', () => {
  test('refuses a wrong password, then signs in with email and password (httpOnly cookie)', async ({ page, context }) => {
    const u = demoUser('Ada');
    await page.goto('/login');
    await page.getByTestId('login-email').fill(u.email);
    await page.getByTestId('login-password').fill('not-the-right-password');
    await page.getByTestId('login-password-submit').click();
    await expect(page.getByTestId('login-password-error')).toContainText('Wrong email or password');
    // The API-key sign-in stays next to it.
    await expect(page.getByTestId('login-api-key')).toBeVisible();
    await page.screenshot({ path: 'test-results/login-password.png', fullPage: true });
    await page.getByTestId('login-password').fill(u.password);
    await page.getByTestId('login-password-submit').click();
    await expect(page.getByTestId('whoami-name')).toContainText('Ada');
    await expect(page.getByTestId('whoami-role')).toContainText('team-admin');
    const session = (await context.cookies()).find((c) => c.name === 'gantry_session')!;
    expect(session.httpOnly).toBe(true);
    expect(session.sameSite).toBe('Lax');
    expect(await page.evaluate(() => document.cookie)).not.toContain('gantry_session');
    await page.getByTestId('sign-out').click();
    await expect(page.getByTestId('login-email')).toBeVisible();
  });

  test('a team admin sees usage against quota and cannot raise the quota above the tenant admin’s', async ({ page }) => {
    const teamId = await researchTeamId();
    // Something running, so that the bar shows use.
    const member = client(demoKey('Max (member)'));
    const job = await member.jobs.create({ teamId, name: 'quota-bar-demo', kind: 'training', resources: { gpus: 2 } });
    try {
      await signInWithPassword(page, 'Ada');
      await page.getByTestId('nav-quotas').click();
      const card = page.locator(`[data-testid="quota-team"][data-team-id="${teamId}"]`);
      const row = card.locator('[data-testid="quota-row"][data-gpu-model="*"]');
      await expect(row.getByTestId('quota-guaranteed')).toHaveValue('160');
      await expect(row.getByTestId('usage-in-use')).not.toHaveText('0', { timeout: 20_000 });
      await expect(row.getByTestId('usage-bar')).toBeVisible();
      await expect(card.getByTestId('gpu-hours')).toContainText('GPU-hours this month');
      await page.screenshot({ path: 'test-results/quotas.png', fullPage: true });

      await row.getByTestId('quota-limit').fill('400');
      await card.getByTestId('quota-save').click();
      await expect(card.getByTestId('quota-error')).toContainText('A team admin cannot raise all GPU models above what the tenant admin set');
      await expect(card.getByTestId('quota-error')).not.toContainText('rule ');
      await page.screenshot({ path: 'test-results/quotas-refused.png', fullPage: true });
      // Lowering (and moving back up to the ceiling) is allowed.
      await row.getByTestId('quota-limit').fill('180');
      await card.getByTestId('quota-save').click();
      await expect(card.getByTestId('quota-saved')).toBeVisible();
      await row.getByTestId('quota-limit').fill('192');
      await card.getByTestId('quota-save').click();
      await expect(card.getByTestId('quota-saved')).toBeVisible();
      expect((await member.me()).role).toBe('member');
    } finally {
      await member.jobs.cancel(job.id);
    }
  });

  test('creates an API key shown once, lists it by prefix, and revokes it (refused at once)', async ({ page }) => {
    await signInWithPassword(page, 'Ada');
    await page.getByTestId('nav-api-keys').click();
    const name = `e2e-key-${Date.now()}`;
    await page.getByTestId('api-key-name').fill(name);
    await page.getByTestId('api-key-scope-jobs:write').check();
    await page.getByTestId('api-key-create').click();
    const secret = (await page.getByTestId('api-key-secret').textContent())!.trim();
    expect(secret).toMatch(/^gk_[a-z0-9]+_[A-Za-z0-9]+$/);
    const row = page.locator(`[data-testid="api-key-row"][data-key-name="${name}"]`);
    await expect(row).toHaveAttribute('data-state', 'active');
    await expect(row.getByTestId('api-key-scopes')).toContainText('jobs:write');
    await expect(row.getByTestId('api-key-prefix')).toContainText(secret.split('_')[1]!);
    await page.screenshot({ path: 'test-results/api-keys.png', fullPage: true });
    // The new key works, then is refused at once after revocation.
    expect((await client(secret).me()).name).toBe(name);
    await page.getByTestId('api-key-secret-dismiss').click();
    await expect(page.getByTestId('api-key-secret')).toHaveCount(0);
    await row.getByTestId('api-key-revoke').click();
    await page.getByTestId('confirm-accept').click();
    await expect(row).toHaveAttribute('data-state', 'revoked');
    await expect(client(secret).me()).rejects.toMatchObject({ status: 401 });
  });

  test('a tenant admin reads the audit log of the changes, with actor, key or session and source', async ({ page }) => {
    const tess = await signInWithPassword(page, 'Tess');
    // A change by a key, so that the log has both kinds.
    const teamId = await researchTeamId();
    await client(demoKey('tenant admin, Acme AI')).quotas.put(teamId, { quotas: [{ gpuModel: '*', guaranteed: 160, limit: 192 }] });
    await page.getByTestId('nav-audit').click();
    await expect(page.getByTestId('audit-table')).toBeVisible();
    const quotaRow = page.locator('[data-testid="audit-row"][data-action="PUT /v1/teams/:id/quotas"]').first();
    await expect(quotaRow).toBeVisible();
    await expect(page.locator('[data-testid="audit-row"][data-action="POST /v1/auth/login"]').first()).toBeVisible();
    await expect(page.getByTestId('audit-actor').filter({ hasText: tess.email }).first()).toBeVisible();
    await quotaRow.click();
    await expect(page.getByTestId('audit-data')).toContainText('"guaranteed": 160');
    await page.getByTestId('audit-filter').fill('quotas');
    await expect(page.locator('[data-testid="audit-row"][data-action="POST /v1/auth/login"]')).toHaveCount(0);
    await expect(page.locator('[data-testid="audit-row"][data-action="PUT /v1/teams/:id/quotas"]').first()).toBeVisible();
    await page.screenshot({ path: 'test-results/audit.png', fullPage: true });
    expect(demoKeys().tenants.acme).toBeTruthy();
  });
});
