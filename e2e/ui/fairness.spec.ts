import { expect, test, type Page } from '@playwright/test';
import { client, demoKey } from '../support';

/** Fair share over time: the Fairness page and GET /v1/fairness, per tenant. */
async function signIn(page: Page, key: string) {
  await page.goto('/login');
  await page.getByTestId('login-api-key').fill(key);
  await page.getByTestId('login-submit').click();
  await expect(page.getByTestId('nav-fairness')).toBeVisible();
}

test.describe('fairness', () => {
  test('a member sees its tenant’s teams with entitlement, decayed usage and share, as the API reports them', async ({ page }) => {
    const key = demoKey('Max (member)');
    const api = await client(key).fairness.get();
    expect(api.halfLifeSeconds).toBeGreaterThan(0);
    const names = api.teams.map((t) => t.teamName);
    expect(names).toEqual(expect.arrayContaining(['Research', 'Inference']));
    await signIn(page, key);
    await page.getByTestId('nav-fairness').click();
    await expect(page.getByTestId('fairness-settings')).toContainText('half-life');
    const rows = page.getByTestId('fairness-team');
    await expect(rows).toHaveCount(api.teams.length);
    for (const t of api.teams) {
      const row = page.locator(`[data-testid="fairness-team"][data-team-id="${t.teamId}"]`);
      await expect(row).toContainText(t.teamName);
      await expect(row).toContainText(`weight`);
      await expect(row.getByTestId('fairness-share')).toContainText('%');
      await expect(row.getByTestId('fairness-decayed')).toContainText('GPU-h');
    }
  });

  test('another tenant sees none of these teams', async () => {
    const acme = await client(demoKey('Max (member)')).fairness.get();
    const globex = await client(demoKey('Globex')).fairness.get();
    const acmeIds = new Set(acme.teams.map((t) => t.teamId));
    expect(globex.teams.some((t) => acmeIds.has(t.teamId))).toBe(false);
    expect(globex.queue.some((q) => acmeIds.has(q.teamId))).toBe(false);
  });
});
