import { expect, test, type Locator, type Page } from '@playwright/test';
import { client, demoKey, until } from '../support';

/**
 * The demo's past (docs/demo.md): with GANTRY_DEMO_HISTORY=true the worker replays a synthetic
 * week at its first start, and the Overview and Utilization charts show it instead of flat lines.
 * The e2e system runs without it unless asked:
 *   GANTRY_DEMO_HISTORY=true bash scripts/e2e.sh --project=ui ui/demo-history.spec.ts
 */
test.skip(process.env.GANTRY_DEMO_HISTORY !== 'true', 'the e2e system writes the demo history only with GANTRY_DEMO_HISTORY=true');

const DAY_MS = 86_400_000;
const tenantAdmin = () => demoKey('tenant admin, Acme AI');

async function signIn(page: Page, key: string) {
  await page.goto('/login');
  await page.getByTestId('login-api-key').fill(key);
  await page.getByTestId('login-submit').click();
  await expect(page.getByTestId('nav-utilization')).toBeVisible();
}

/** The largest rise and fall (pixels) of the chart's area lines: 0 for flat lines. */
async function largestSwing(chart: Locator): Promise<number> {
  const curves = chart.locator('path.recharts-area-curve');
  await expect(curves.first()).toBeVisible();
  const ys = await curves.evaluateAll((paths) =>
    paths.map((p) => [...(p.getAttribute('d') ?? '').matchAll(/-?\d+(?:\.\d+)?/g)].map((m) => Number(m[0])).filter((_, i) => i % 2 === 1)),
  );
  return Math.max(0, ...ys.map((y) => (y.length ? Math.max(...y) - Math.min(...y) : 0)));
}

test.describe('demo history', () => {
  test.beforeAll(async () => {
    test.setTimeout(240_000); // the week is replayed and written in the background after boot
    const api = client(tenantAdmin());
    await until(async () => {
      const r = await api.utilization.report({ groupBy: 'team', step: '1h', from: new Date(Date.now() - 7 * DAY_MS).toISOString() });
      const old = r.series.flatMap((s) => s.points).filter((p) => Date.parse(p.t) < Date.now() - 3 * DAY_MS && p.allocatedGpuHours > 0);
      return old.length > 10;
    }, 220_000);
  });

  test('the Overview 24 h trend and the 7-day utilization chart are not flat', async ({ page }) => {
    await signIn(page, tenantAdmin());
    const trend = page.getByTestId('overview-trend-chart');
    await expect(trend).toBeVisible();
    await expect.poll(async () => Number(await trend.getAttribute('data-points'))).toBeGreaterThan(90);
    expect(await largestSwing(trend)).toBeGreaterThan(20);

    await page.getByTestId('nav-utilization').click();
    await page.getByTestId('utilization-range').selectOption('7d');
    // the team areas rise and fall over the week
    await expect.poll(() => largestSwing(page.getByTestId('utilization-chart')), { timeout: 30_000 }).toBeGreaterThan(20);
    const hours = page.getByTestId('utilization-gpu-hours');
    await expect(hours.first()).toBeVisible();
    const values = (await hours.allTextContents()).map((t) => Number(t.replace(/[^0-9.]/g, '')));
    expect(values.every((v) => v > 0)).toBe(true);
  });
});
