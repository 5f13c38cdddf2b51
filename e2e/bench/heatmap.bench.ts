import { expect, test } from '@playwright/test';
import { createGantryClient } from '@gantry/sdk';

/**
 * Prints: navigation -> heatmap drawn (ms), the canvas draw (ms), the API answer (ms, KiB),
 * a metric switch redraw (ms), median of 5 page loads, with 8,000 GPUs sampled.
 * Run by packages/bench/heatmap/run.sh (not part of the e2e suite: its own config).
 */
test('heatmap of 8,000 GPUs in Chromium', async ({ page }) => {
  const key = process.env.E2E_ADMIN_KEY!;
  const api = createGantryClient({ baseUrl: process.env.E2E_API_URL!, apiKey: key });
  // Wait for the inventory and a telemetry tick of every GPU; keep a few hundred GPUs busy.
  await expect.poll(async () => (await api.utilization.gpus()).gpus.id.length, { timeout: 300_000, intervals: [2000] }).toBe(8000);
  const tenant = await api.tenants.create({ name: 'Bench', slug: 'bench', gpuTotal: 8000 });
  const team = await api.teams.create(tenant.id, { name: 'Bench', slug: 'bench' });
  await api.quotas.put(team.id, { quotas: [{ gpuModel: '*', guaranteed: 8000, limit: 8000 }] });
  const teamKey = await api.apiKeys.create({
    name: 'bench',
    tenantId: tenant.id,
    teamId: team.id,
    role: 'team-admin',
    scopes: ['jobs:read', 'jobs:write', 'cluster:read'],
  });
  const teamApi = createGantryClient({ baseUrl: process.env.E2E_API_URL!, apiKey: teamKey.key });
  let refused = 0;
  for (let i = 0; i < 40; i++) {
    await teamApi.jobs
      .create({ teamId: team.id, name: `bench-${i}`, kind: 'training', replicas: 1, resources: { gpus: 8, gpuModel: i % 2 ? 'A100-80GB' : 'H100-80GB' } })
      .catch((e: unknown) => {
        if (refused++ === 0) console.log(`job refused: ${String(e)}`);
      });
  }
  // Wait until the busy GPUs show in the samples (320 GPUs at ~90 % SM).
  await expect
    .poll(async () => (await api.utilization.gpus()).gpus.smPct.filter((s) => s !== null && s > 50).length, { timeout: 120_000, intervals: [2000] })
    .toBeGreaterThanOrEqual(refused ? 0 : 320);
  await expect.poll(async () => (await api.utilization.gpus()).gpus.smPct.filter((s) => s !== null).length, { timeout: 120_000, intervals: [2000] }).toBe(8000);

  await page.goto('/login');
  await page.getByTestId('login-api-key').fill(key);
  await page.getByTestId('login-submit').click();
  await expect(page.getByTestId('nav-heatmap')).toBeVisible();

  const loads: { drawnMs: number; drawMs: number; apiMs: number; apiKiB: number; switchMs: number }[] = [];
  for (let i = 0; i < 5; i++) {
    await page.goto('/heatmap');
    const canvas = page.getByTestId('heatmap-canvas');
    await expect(canvas).toHaveAttribute('data-render-ms', /\d/, { timeout: 30_000 });
    await expect(canvas).toHaveAttribute('data-gpu-count', '8000');
    const drawnMs = await page.evaluate(() => performance.now());
    const drawMs = Number(await canvas.getAttribute('data-render-ms'));
    const res = await page.evaluate(() => {
      const r = performance.getEntriesByType('resource').filter((e) => e.name.includes('/v1/utilization/gpus')) as unknown as {
        startTime: number;
        responseEnd: number;
        encodedBodySize: number;
        transferSize: number;
      }[];
      const last = r[r.length - 1];
      return last ? { ms: last.responseEnd - last.startTime, bytes: last.encodedBodySize || last.transferSize } : { ms: 0, bytes: 0 };
    });
    const t0 = await page.evaluate(() => performance.now());
    await page.getByTestId('heatmap-metric').selectOption(i % 2 ? 'sm' : 'power');
    await expect(canvas).toHaveAttribute('data-metric', i % 2 ? 'sm' : 'power');
    const switchMs = (await page.evaluate(() => performance.now())) - t0;
    loads.push({ drawnMs: Math.round(drawnMs), drawMs, apiMs: Math.round(res.ms), apiKiB: Math.round(res.bytes / 1024), switchMs: Math.round(switchMs) });
  }
  await page.getByTestId('heatmap-metric').selectOption('sm');
  await page.screenshot({ path: 'test-results/bench-heatmap-8000.png', fullPage: true });
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const r = {
    bench: 'heatmap',
    gpus: 8000,
    loads,
    medianNavigationToDrawnMs: med(loads.map((l) => l.drawnMs)),
    medianCanvasDrawMs: med(loads.map((l) => l.drawMs)),
    medianApiMs: med(loads.map((l) => l.apiMs)),
    apiKiB: loads[0]!.apiKiB,
    medianMetricSwitchMs: med(loads.map((l) => l.switchMs)),
  };
  console.log(
    `heatmap, 8000 GPUs: navigation -> drawn ${r.medianNavigationToDrawnMs} ms (target < 1000), canvas draw ${r.medianCanvasDrawMs} ms, API ${r.medianApiMs} ms / ${r.apiKiB} KiB, metric switch ${r.medianMetricSwitchMs} ms`,
  );
  console.log(JSON.stringify(r));
});
