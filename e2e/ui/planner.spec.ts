import { expect, test, type Download, type Page } from '@playwright/test';
import { demoKey } from '../support';

/**
 * The Planner page: a tenant admin chooses a workload, the live cluster and policies, runs a
 * small plan, watches it finish, compares the policies and downloads the comparison; bad input
 * is named; a long run is cancelled.
 */
const tenantAdmin = () => demoKey('tenant admin, Acme AI');

async function signIn(page: Page, key: string) {
  await page.goto('/login');
  await page.getByTestId('login-api-key').fill(key);
  await page.getByTestId('login-submit').click();
  await expect(page.getByTestId('whoami')).toBeAttached();
}

async function text(d: Download): Promise<string> {
  const chunks = await (await d.createReadStream()).toArray();
  return Buffer.concat(chunks as Buffer[]).toString('utf8');
}

test.describe('planner page', () => {
  test.setTimeout(180_000);

  test('a member has no Planner in the menu', async ({ page }) => {
    await signIn(page, demoKey('Max (member)'));
    await expect(page.getByTestId('nav-jobs')).toBeAttached();
    await expect(page.getByTestId('nav-planner')).toHaveCount(0);
  });

  test('runs a small plan on the live inventory, compares the policies and exports CSV and JSON', async ({ page }) => {
    await signIn(page, tenantAdmin());
    await page.getByTestId('nav-planner').click();
    await expect(page).toHaveURL(/\/planner$/);
    await page.getByTestId('planner-workload').selectOption('generator');
    await page.getByTestId('planner-jobs').fill('150');
    await page.getByTestId('planner-interarrival').fill('20');
    await page.getByTestId('planner-duration').fill('1800');
    await page.getByTestId('planner-cluster').selectOption('inventory');
    await page.getByTestId('planner-policy-fgd').uncheck();
    await page.getByTestId('planner-policy-best-fit').uncheck();
    await page.getByTestId('planner-start').click();

    const run = page.getByTestId('planner-run');
    await expect(run).toHaveAttribute('data-status', 'succeeded', { timeout: 120_000 });
    const rows = page.getByTestId('planner-row');
    await expect(rows).toHaveCount(2);
    await expect(rows.nth(0)).toHaveAttribute('data-policy', 'gantry');
    await expect(rows.nth(1)).toHaveAttribute('data-policy', 'kubernetes-default');
    // gantry's row carries its change against kubernetes-default
    await expect(rows.nth(0).getByTestId('planner-util')).toContainText(/\(([+-]?[\d.]+ %|–)\)/);
    await expect(page.getByTestId('planner-summary')).toContainText('150 jobs');
    await expect(page.getByTestId('planner-chart-utilisation').locator('.recharts-line')).toHaveCount(2);
    await expect(page.getByTestId('planner-chart-energy').locator('.recharts-bar-rectangle').first()).toBeVisible();
    await expect(page.getByTestId('planner-chart-waits').locator('.recharts-surface').first()).toBeVisible();
    await page.screenshot({ path: 'test-results/planner.png', fullPage: true });

    const csvDownload = page.waitForEvent('download');
    await page.getByTestId('planner-export-csv').click();
    const csvFile = await csvDownload;
    expect(csvFile.suggestedFilename()).toMatch(/^gantry-plan-.+\.csv$/);
    const csv = (await text(csvFile)).trim().split('\n');
    expect(csv[0]).toMatch(/^policy,powerManagement,jobs,placed,unplaced,gpuUtilisationPct,/);
    expect(csv.slice(1).map((l) => l.split(',')[0])).toEqual(['gantry', 'kubernetes-default']);
    expect(csv[1]!.split(',')[2]).toBe('150');

    const jsonDownload = page.waitForEvent('download');
    await page.getByTestId('planner-export-json').click();
    const json = JSON.parse(await text(await jsonDownload));
    expect(json.status).toBe('succeeded');
    expect(json.result.policies).toHaveLength(2);
    expect(json.result.gantryVsKubernetesDefault).toEqual(expect.objectContaining({ energyKWh: expect.any(Number) }));
  });

  test('a trace file with a negative duration is refused, naming the row and the field', async ({ page }) => {
    await signIn(page, tenantAdmin());
    await page.goto('/planner');
    await page.getByTestId('planner-workload').selectOption('csv');
    await page.getByTestId('planner-workload-file').setInputFiles({
      name: 'bad.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\np0,1000,1024,1,1000,0,60\np1,1000,1024,1,1000,100,40\n'),
    });
    await page.getByTestId('planner-cluster').selectOption('openb');
    await page.getByTestId('planner-start').click();
    await expect(page.getByTestId('planner-error')).toBeVisible();
    await expect(page.locator('[data-testid="planner-error-field"][data-field="workload.csv[row 2].deletion_time"]')).toContainText('negative duration');
  });

  test('a long run shows its progress and is cancelled from the page', async ({ page }) => {
    await signIn(page, tenantAdmin());
    await page.goto('/planner');
    await page.getByTestId('planner-workload').selectOption('openb');
    await page.getByTestId('planner-cluster').selectOption('openb');
    await page.getByTestId('planner-size').fill('');
    await page.getByTestId('planner-start').click();
    const run = page.getByTestId('planner-run');
    await expect(run).toHaveAttribute('data-status', 'running', { timeout: 60_000 });
    await expect(page.getByTestId('planner-progress')).toBeVisible();
    await page.getByTestId('planner-cancel').click();
    await page.getByTestId('confirm-accept').click();
    await expect(run).toHaveAttribute('data-status', 'cancelled');
    await expect(page.getByTestId('planner-run-error')).toContainText('cancelled by request');
  });
});
