import { expect, test, type Page } from '@playwright/test';
import { client, demoKey, until } from '../support';

/**
 * Utilization views: the Overview dashboard, the GPU heatmap and the team report,
 * fed by the worker's telemetry sampling of the simulated cluster.
 */
const adminKey = () => {
  const k = process.env.E2E_ADMIN_KEY;
  if (!k) throw new Error('E2E_ADMIN_KEY is not set: run through scripts/e2e.sh');
  return k;
};

async function signIn(page: Page, key: string) {
  await page.goto('/login');
  await page.getByTestId('login-api-key').fill(key);
  await page.getByTestId('login-submit').click();
  await expect(page.getByTestId('nav-utilization')).toBeVisible();
}

test.describe('utilization views', () => {
  const inferenceKey = () => demoKey('member, team Inference');
  let jobId: string;

  test.beforeAll(async () => {
    test.setTimeout(180_000); // a busy machine samples and rolls up slower
    const api = client(inferenceKey());
    const me = await api.me();
    const job = await api.jobs.create({
      teamId: me.teamId!,
      name: 'e2e-util-train',
      kind: 'training',
      resources: { gpus: 4, gpuModel: 'A100-80GB' },
    });
    jobId = job.id;
    await until(async () => (await api.jobs.get(job.id)).state === 'running');
    // The telemetry tick (every 15 s by default) has sampled the running job and rolled it up, as
    // the console's report asks for it (last 24 hours, 15 min steps): the page reads it once.
    await until(async () => {
      const r = await api.utilization.report({ groupBy: 'team', step: '15m', from: new Date(Date.now() - 24 * 3600_000).toISOString() });
      return r.series.some((s) => s.label === 'Inference' && s.totals.allocatedGpuHours >= 0.01);
    }, 120_000);
  });

  test.afterAll(async () => {
    if (jobId) await client(inferenceKey()).jobs.cancel(jobId);
  });

  test('the overview shows capacity, allocated and used by model, the 24 h trend, teams against quota and idle allocations', async ({ page }) => {
    await signIn(page, inferenceKey());
    await page.getByTestId('nav-overview').click();
    await expect(page.getByTestId('overview-model-chart').locator('.recharts-bar-rectangle').first()).toBeVisible();
    const a100 = page.locator('[data-testid="model-usage"][data-gpu-model="A100-80GB"]');
    await expect(a100).toContainText(/used of/);
    await expect.poll(async () => Number(await a100.getAttribute('data-used'))).toBeGreaterThanOrEqual(3);
    const trend = page.getByTestId('overview-trend-chart');
    await expect(trend.locator('.recharts-surface').first()).toBeVisible();
    await expect(trend).toHaveAttribute('data-points', /^(9[6-7])$/);
    await expect(trend.locator('.recharts-area')).toHaveCount(2);
    const team = page.locator('[data-testid="team-usage-row"][data-team-name="Inference"]');
    await expect(team.getByTestId('team-usage-now')).toHaveText(/^4/);
    await expect(team.getByTestId('team-usage-quota')).toContainText('64');
    await expect(page.getByTestId('idle-allocations')).toBeVisible();
    await page.screenshot({ path: 'test-results/utilization-overview.png', fullPage: true });
  });

  test('the heatmap draws every GPU on a canvas, explains a cell on hover and opens its node', async ({ page }) => {
    await signIn(page, inferenceKey());
    await page.getByTestId('nav-heatmap').click();
    const canvas = page.getByTestId('heatmap-canvas');
    await expect(canvas).toHaveAttribute('data-gpu-count', '288');
    await expect(canvas).toHaveAttribute('data-node-count', '36');
    await expect.poll(async () => Number(await canvas.getAttribute('data-sampled-count'))).toBe(288);
    await expect(canvas).toHaveAttribute('data-render-ms', /\d/);
    await canvas.hover({ position: { x: 5, y: 5 } });
    await expect(page.getByTestId('heatmap-tooltip')).toContainText(/GPU 0/);
    await expect(page.getByTestId('heatmap-tooltip')).toContainText(/SM/);
    await page.getByTestId('heatmap-metric').selectOption('allocated');
    await expect(canvas).toHaveAttribute('data-metric', 'allocated');
    await page.screenshot({ path: 'test-results/utilization-heatmap.png', fullPage: true });
    await canvas.click({ position: { x: 5, y: 5 } });
    await expect(page.getByTestId('node-detail')).toBeVisible();
  });

  test('the team report shows GPU-hours and cost, regroups, and exports CSV', async ({ page }) => {
    await signIn(page, inferenceKey());
    await page.getByTestId('nav-utilization').click();
    const row = page.locator('[data-testid="utilization-row"][data-label="Inference"]');
    await expect(row).toBeVisible();
    await expect.poll(async () => Number(await row.getByTestId('utilization-gpu-hours').textContent())).toBeGreaterThan(0);
    await expect(row.getByTestId('utilization-cost')).toContainText('$');
    await expect(page.getByTestId('utilization-chart').locator('.recharts-area').first()).toBeVisible();
    await expect(page.getByTestId('utilization-prices')).toContainText('A100-80GB');
    await page.screenshot({ path: 'test-results/utilization-report.png', fullPage: true });

    const download = page.waitForEvent('download');
    await page.getByTestId('utilization-export').click();
    const file = await download;
    expect(file.suggestedFilename()).toBe('gantry-utilization-team-24h.csv');
    const text = await (await file.createReadStream()).toArray();
    const csv = Buffer.concat(text as Buffer[]).toString('utf8');
    expect(csv.split('\n')[0]).toMatch(/^team,label,bucket_start,/);
    expect(csv).toContain(',Inference,');

    await page.getByTestId('utilization-group-by').selectOption('gpuModel');
    await expect(page.locator('[data-testid="utilization-row"][data-key="A100-80GB"]')).toBeVisible();
  });

  test('a picked from/to range drives the table; a wrong range names its field; idle GPU-hours and the energy method are shown', async ({ page }) => {
    await signIn(page, inferenceKey());
    await page.getByTestId('nav-utilization').click();
    await expect(page.locator('[data-testid="utilization-row"][data-label="Inference"]')).toBeVisible();
    // what the allocated-but-idle and energy figures mean is on the page
    await expect(page.getByTestId('utilization-total-idle')).toContainText('Allocated but idle GPU-hours');
    await expect(page.getByTestId('utilization-energy-legend')).toContainText('Measured');
    await expect(page.getByTestId('utilization-energy-legend')).toContainText('Estimated');
    const row = page.locator('[data-testid="utilization-row"][data-label="Inference"]');
    await expect(row.getByTestId('utilization-idle-gpu-hours')).toHaveText(/^\d+\.\d\d$/);
    await expect(row.getByTestId('utilization-energy')).toHaveText(/^\d+\.\d\d · est\. \d+\.\d\d$/);

    const local = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await page.getByTestId('utilization-range').selectOption('custom');
    // to before from: the field at fault is named, no report is asked for
    await page.getByTestId('utilization-from').fill(local(new Date(Date.now() + 3600_000)));
    await page.getByTestId('utilization-to').fill(local(new Date()));
    await expect(page.getByTestId('utilization-range-error')).toHaveText(/^To: must be after/);
    await expect(page.getByTestId('utilization-table')).toHaveCount(0);
    // more than 90 days
    await page.getByTestId('utilization-from').fill(local(new Date(Date.now() - 100 * 86_400_000)));
    await expect(page.getByTestId('utilization-range-error')).toHaveText(/^From: at most 90 days/);
    // a window that ended before this run's job started holds none of its hours; one around now does
    await page.getByTestId('utilization-from').fill(local(new Date(Date.now() - 3 * 86_400_000)));
    await page.getByTestId('utilization-to').fill(local(new Date(Date.now() - 2 * 86_400_000)));
    await expect(page.getByTestId('utilization-range-error')).toHaveCount(0);
    await expect(page.locator('[data-testid="utilization-row"][data-label="Inference"] [data-testid="utilization-gpu-hours"]')).toHaveText('0.00');
    await page.getByTestId('utilization-from').fill(local(new Date(Date.now() - 2 * 3600_000)));
    await page.getByTestId('utilization-to').fill(local(new Date(Date.now() + 3600_000)));
    await expect.poll(async () => Number(await row.getByTestId('utilization-gpu-hours').textContent())).toBeGreaterThan(0);

    // the API refuses what the page refuses, naming the field
    const bad = await fetch(
      `${process.env.E2E_API_URL}/v1/utilization?groupBy=team&from=${encodeURIComponent(new Date(Date.now() - 100 * 86_400_000).toISOString())}`,
      { headers: { authorization: `Bearer ${inferenceKey()}` } },
    );
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { details: { field: string }[] } }).error.details[0]!.field).toBe('from');
  });

  test('another tenant sees none of this usage', async ({ page }) => {
    await signIn(page, demoKey('Globex Labs'));
    await page.getByTestId('nav-utilization').click();
    await expect(page.locator('[data-testid="utilization-row"][data-label="Vision"]')).toBeVisible();
    await expect(page.locator('[data-testid="utilization-row"][data-label="Inference"]')).toHaveCount(0);
    await page.getByTestId('utilization-group-by').selectOption('tenant');
    await expect(page.getByTestId('utilization-table').or(page.getByText('No usage in this range.'))).toBeVisible();
    await expect(page.locator('[data-testid="utilization-row"][data-label="Acme AI"]')).toHaveCount(0);
  });

  test('the operator sees every tenant', async ({ page }) => {
    await signIn(page, adminKey());
    await page.getByTestId('nav-utilization').click();
    await page.getByTestId('utilization-group-by').selectOption('tenant');
    await expect(page.locator('[data-testid="utilization-row"][data-label="Acme AI"]')).toBeVisible();
  });
});
