import { expect, test, type Page } from '@playwright/test';
import { client, demoKey, until } from '../support';

async function signIn(page: Page, key: string) {
  await page.goto('/login');
  await expect(async () => {
    await page.getByTestId('login-api-key').fill(key);
    await page.getByTestId('login-submit').click();
    await expect(page.getByTestId('nav-jobs')).toBeVisible({ timeout: 5_000 });
  }).toPass({ timeout: 40_000 });
}

test.describe('console: audit for a team admin', () => {
  test("a team admin reads its team's changes by name, refused attempts marked; a member has no audit page", async ({ page }) => {
    test.setTimeout(300_000);
    const member = client(demoKey('Max (member)'));
    const me = await member.me();
    const job = await member.jobs.create({
      teamId: me.teamId!,
      name: 'audit-team-job',
      kind: 'batch',
      resources: { gpus: 1, gpuModel: 'H100-80GB' },
      simulation: { durationSeconds: 600 },
    });
    await member.jobs.cancel(job.id);
    await expect(member.jobs.cancel(job.id)).rejects.toMatchObject({ status: 409 });
    // a change in another team, which the Research admin must not see
    const inference = client(demoKey('member, team Inference'));
    const other = await inference.jobs.create({
      teamId: (await inference.me()).teamId!,
      name: 'audit-other-team',
      kind: 'batch',
      resources: { gpus: 1, gpuModel: 'H100-80GB' },
      simulation: { durationSeconds: 600 },
    });
    await inference.jobs.cancel(other.id);

    const admin = demoKey('Ada (team admin)');
    await until(async () => (await client(admin).audit.list({ outcome: 'refused' })).items.some((e) => e.target === job.id), 30_000);
    await signIn(page, admin);
    await page.getByTestId('nav-audit').click();
    const rows = page.getByTestId('audit-row');
    await expect(rows.getByTestId('audit-target').filter({ hasText: 'job audit-team-job' }).first()).toBeVisible({ timeout: 30_000 });
    await expect(rows.getByTestId('audit-target').filter({ hasText: 'audit-other-team' })).toHaveCount(0);

    await page.getByTestId('audit-refused-only').check();
    const refused = page.locator('[data-testid="audit-row"][data-outcome="refused"]');
    await expect(refused.filter({ hasText: 'job audit-team-job' })).toHaveCount(1);
    await expect(page.locator('[data-testid="audit-row"][data-outcome="done"]')).toHaveCount(0);
    await expect(refused.first().getByTestId('audit-refused')).toHaveText('refused 409');

    // a member: no audit entry in the navigation, and the API refuses
    await expect(member.audit.list()).rejects.toMatchObject({ status: 403 });
  });
});
