import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page, type TestInfo } from '@playwright/test';
import { client, demoKey, until } from '../support';

/**
 * Every page of the console on a phone (390 px) and a desktop (1440 px): no sideways page scroll,
 * no table cut off inside its card, no serious or critical accessibility violation (axe-core),
 * and a screenshot of each page at each width in the report. Then the shared pieces a person
 * meets on any page: the menu button on a phone, dialogs (focus kept inside and given back, the
 * whole console dimmed), the focus ring, and what the console offers by role.
 */

const adminKey = () => {
  const k = process.env.E2E_ADMIN_KEY;
  if (!k) throw new Error('E2E_ADMIN_KEY is not set: run through scripts/e2e.sh');
  return k;
};

const WIDTHS = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1440, height: 900 },
] as const;

async function signIn(page: Page, key: string) {
  await page.goto('/login');
  await page.getByTestId('login-api-key').fill(key);
  await page.getByTestId('login-submit').click();
  await expect(page.getByTestId('whoami')).toBeAttached();
}

/** Waits until the page has drawn its data (no "Loading…" block left). */
async function settled(page: Page) {
  await expect(page.locator('.boot')).toHaveCount(0);
  await expect(page.locator('.loading-block')).toHaveCount(0, { timeout: 20_000 });
  await expect(page.getByTestId('error-panel')).toHaveCount(0);
  // charts size themselves after the first frame
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

interface Layout {
  pageWidth: number;
  viewport: number;
  /**
   * Tables wider than the box they sit in: whether scrolling that box brings the table's last
   * column into view, and whether a keyboard can reach the box to scroll it.
   */
  overflowingTables: { table: string; tableWidth: number; boxWidth: number; reachable: boolean; keyboard: boolean }[];
}

/** Measures the page in the browser. */
function measure(page: Page): Promise<Layout> {
  return page.evaluate(() => {
    const name = (t: Element) => t.getAttribute('data-testid') ?? t.closest('[data-testid]')?.getAttribute('data-testid') ?? 'table';
    const overflowingTables = [...document.querySelectorAll('main table')].flatMap((table) => {
      let box = table.parentElement;
      while (box && box !== document.body && getComputedStyle(box).overflowX === 'visible') box = box.parentElement;
      if (!box || box === document.body) return [];
      const tableWidth = table.getBoundingClientRect().width;
      if (tableWidth <= box.clientWidth + 1) return [];
      const before = box.scrollLeft;
      box.scrollLeft = box.scrollWidth;
      const reachable = table.getBoundingClientRect().right <= box.getBoundingClientRect().right + 1;
      box.scrollLeft = before;
      const keyboard = box.tabIndex >= 0 || !!box.querySelector('a[href], button, input, select, textarea, [tabindex="0"]');
      return [{ table: name(table), tableWidth: Math.round(tableWidth), boxWidth: box.clientWidth, reachable, keyboard }];
    });
    return { pageWidth: document.documentElement.scrollWidth, viewport: window.innerWidth, overflowingTables };
  });
}

async function expectFits(page: Page, label: string, width: number) {
  const m = await measure(page);
  expect.soft(m.pageWidth, `${label}: the page scrolls sideways (${m.pageWidth} px in a ${m.viewport} px window)`).toBeLessThanOrEqual(m.viewport);
  if (width >= 1440) {
    // on a desktop every table fits its card whole
    expect.soft(m.overflowingTables, `${label}: tables cut off inside their card`).toEqual([]);
  } else {
    // on a phone a wide table scrolls inside its card (its last column can be scrolled to, with a mouse or the keyboard)
    const hidden = m.overflowingTables.filter((t) => !t.reachable || !t.keyboard);
    expect.soft(hidden, `${label}: tables cut off with no way to scroll them`).toEqual([]);
  }
}

async function expectAccessible(page: Page, label: string) {
  const result = await new AxeBuilder({ page }).analyze();
  const bad = result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help} -> ${v.nodes
          .slice(0, 3)
          .map((n) => n.target.join(' '))
          .join(' | ')}`,
    );
  expect.soft(bad, `${label}: axe-core violations`).toEqual([]);
}

async function attachScreenshot(page: Page, testInfo: TestInfo, label: string) {
  await testInfo.attach(label, { body: await page.screenshot({ fullPage: true }), contentType: 'image/png' });
}

/** Pages of the console, the detail pages on a real job and node. */
async function consolePages(): Promise<{ name: string; path: string }[]> {
  const admin = client(adminKey());
  const nodes = await admin.nodes.list({ limit: 1 });
  const member = client(demoKey('Max (member)'));
  const me = await member.me();
  const jobs = await member.jobs.list({ teamId: me.teamId!, limit: 1 });
  const job =
    jobs.items[0] ??
    (await member.jobs.create({ teamId: me.teamId!, name: 'screens-sample', kind: 'training', resources: { gpus: 1 }, simulation: { durationSeconds: 600 } }));
  // a small what-if run, finished by the time the planner page is drawn (its charts and tables laid out too)
  const plan = await admin.planner.create({
    workload: { kind: 'generator', jobs: 200, meanInterarrivalSeconds: 30, meanDurationSeconds: 1800, mix: { share: 0.8, whole: 0.2, multi: 0 } },
    cluster: { kind: 'openb', size: 30 },
  });
  await until(async () => (await admin.planner.get(plan.id)).status === 'succeeded', 120_000);
  return [
    { name: 'overview', path: '/' },
    { name: 'jobs', path: '/jobs' },
    { name: 'job', path: `/jobs/${job.id}` },
    { name: 'endpoints', path: '/endpoints' },
    { name: 'cluster', path: '/cluster' },
    { name: 'node', path: `/cluster/nodes/${nodes.items[0]!.id}` },
    { name: 'heatmap', path: '/heatmap' },
    { name: 'utilization', path: '/utilization' },
    { name: 'incidents', path: '/incidents' },
    { name: 'quotas', path: '/quotas' },
    { name: 'reservations', path: '/reservations' },
    { name: 'api-keys', path: '/api-keys' },
    { name: 'audit', path: '/audit' },
    { name: 'planner', path: '/planner' },
  ];
}

test.describe('every page on any screen', () => {
  for (const w of WIDTHS) {
    test(`every page at ${w.width} px: no sideways scroll, no clipped table, no serious axe violation`, async ({ page }, testInfo) => {
      test.setTimeout(240_000);
      const pages = await consolePages();
      await page.setViewportSize({ width: w.width, height: w.height });

      await page.goto('/login');
      await expect(page.getByTestId('login-api-key')).toBeVisible();
      await expectFits(page, `login @${w.width}`, w.width);
      await expectAccessible(page, `login @${w.width}`);
      await attachScreenshot(page, testInfo, `login-${w.width}px`);

      await signIn(page, adminKey());
      for (const p of pages) {
        await page.goto(p.path);
        await settled(page);
        const label = `${p.name} @${w.width}`;
        await attachScreenshot(page, testInfo, `${p.name}-${w.width}px`);
        await expectFits(page, label, w.width);
        await expectAccessible(page, label);
      }
    });
  }

  test('on a phone the navigation sits behind a menu button, opens over the page and closes on a link', async ({ page }, testInfo) => {
    await page.setViewportSize({ width: 360, height: 740 });
    await signIn(page, demoKey('Max (member)'));
    const menu = page.getByTestId('nav-menu');
    await expect(menu).toBeVisible();
    await expect(menu).toHaveAttribute('aria-expanded', 'false');
    await expect(page.getByTestId('nav-jobs')).toBeHidden();
    // the sidebar takes no width: the page has the whole screen
    const main = await page.locator('main').boundingBox();
    expect(main!.x).toBeLessThan(1);
    expect(main!.width).toBeGreaterThan(340);

    await menu.click();
    await expect(menu).toHaveAttribute('aria-expanded', 'true');
    await expect(page.getByTestId('nav-jobs')).toBeVisible();
    await attachScreenshot(page, testInfo, 'menu-open-360px');
    await expectAccessible(page, 'menu open @360');
    await page.getByTestId('nav-jobs').click();
    await expect(page).toHaveURL(/\/jobs$/);
    await expect(page.getByTestId('nav-jobs')).toBeHidden();
    await expect(menu).toHaveAttribute('aria-expanded', 'false');

    // Escape closes it too, and gives the focus back to the menu button
    await menu.click();
    await expect(page.getByTestId('nav-overview')).toBeVisible();
    await page.keyboard.press('Escape');
    await expect(page.getByTestId('nav-overview')).toBeHidden();
    await expect(menu).toBeFocused();
  });

  test('the submit dialog is modal: focus inside, Tab cannot leave it, Escape gives focus back, the sidebar is dimmed too', async ({ page }) => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await signIn(page, demoKey('Max (member)'));
    await page.goto('/jobs');
    const open = page.getByTestId('job-submit-open');
    await open.click();
    const dialog = page.getByRole('dialog', { name: 'Submit a job' });
    await expect(dialog).toBeVisible();
    await expect(dialog).toHaveAttribute('aria-modal', 'true');
    await expect(page.getByTestId('submit-name')).toBeFocused();
    for (let i = 0; i < 30; i++) {
      await page.keyboard.press(i % 7 === 6 ? 'Shift+Tab' : 'Tab');
      expect(await page.evaluate(() => !!document.activeElement?.closest('[role="dialog"]')), `focus left the dialog after ${i + 1} Tab presses`).toBe(true);
    }
    // the backdrop is over the sidebar: a click there lands on the backdrop, not on a link
    const nav = await page.getByTestId('nav-cluster').boundingBox();
    const hit = await page.evaluate(([x, y]) => document.elementFromPoint(x!, y!)?.getAttribute('data-testid') ?? '', [nav!.x + 10, nav!.y + 5]);
    expect(hit).toBe('modal-backdrop');
    await expectAccessible(page, 'submit dialog');
    await page.keyboard.press('Escape');
    await expect(dialog).toHaveCount(0);
    await expect(open).toBeFocused();
  });

  test('the keyboard focus is visible: a 2 px ring on links and buttons', async ({ page }) => {
    await signIn(page, demoKey('Max (member)'));
    await page.goto('/jobs');
    await settled(page);
    await page.getByTestId('nav-overview').focus();
    await page.keyboard.press('Tab');
    const ring = await page.evaluate(() => {
      const s = getComputedStyle(document.activeElement!);
      return { style: s.outlineStyle, width: parseFloat(s.outlineWidth) };
    });
    expect(ring.style).not.toBe('none');
    expect(ring.width).toBeGreaterThanOrEqual(2);
  });
});

test.describe('the console offers what the caller may do, in words', () => {
  test("a new API key starts with its role's scopes and says what the role allows", async ({ page }) => {
    await signIn(page, demoKey('Ada (team admin)'));
    await page.goto('/api-keys');
    const role = page.getByTestId('api-key-role');
    await role.selectOption('team-admin');
    await expect(page.getByTestId('api-key-scope-quotas:write')).toBeChecked();
    await expect(page.getByTestId('api-key-scope-jobs:write')).toBeChecked();
    await expect(page.getByTestId('api-key-role-allows')).toContainText('change quotas');
    await role.selectOption('viewer');
    await expect(page.getByTestId('api-key-scope-jobs:read')).toBeChecked();
    await expect(page.getByTestId('api-key-scope-jobs:write')).not.toBeChecked();
    await expect(page.getByTestId('api-key-scope-jobs:write')).toBeDisabled();
    await expect(page.getByTestId('api-key-role-allows')).not.toContainText('submit');
  });

  test("a member is not offered Revoke on a team admin's key, only on its own", async ({ page }) => {
    const max = client(demoKey('Max (member)'));
    const own = await max.apiKeys.create({ name: `screens-own-${Date.now()}`, role: 'member', scopes: ['jobs:read'] });
    await signIn(page, demoKey('Max (member)'));
    await page.goto('/api-keys');
    const rows = page.getByTestId('api-key-row');
    await expect(rows.first()).toBeVisible();
    const adminRow = page.locator('[data-testid="api-key-row"]', { hasText: 'team admin' }).first();
    await expect(adminRow).toBeVisible();
    await expect(adminRow.getByTestId('api-key-revoke')).toHaveCount(0);
    const ownRow = page.locator(`[data-testid="api-key-row"][data-key-prefix="${own.prefix}"]`);
    await ownRow.getByTestId('api-key-revoke').click();
    await expect(page.getByRole('dialog')).toContainText('cannot be undone');
    await page.getByTestId('confirm-accept').click();
    await expect(page.getByRole('dialog')).toHaveCount(0);
    await expect(ownRow).toHaveAttribute('data-state', 'revoked');
  });

  test("the platform admin's team switcher names each team's tenant", async ({ page }) => {
    await signIn(page, adminKey());
    const switcher = page.getByTestId('team-switcher');
    await expect(switcher.locator('optgroup[label="Acme AI"] option', { hasText: 'Research' })).toHaveCount(1);
    await expect(switcher.locator('optgroup[label="Globex Labs"] option', { hasText: 'Vision' })).toHaveCount(1);
    await expect(switcher.locator('option', { hasText: 'Research (Acme AI)' })).toHaveCount(1);
  });

  test('drain asks for confirmation and cancelling leaves the node as it was', async ({ page }) => {
    const nodes = await client(adminKey()).nodes.list({ limit: 100 });
    const node = nodes.items.find((n) => n.state === 'ready')!;
    await signIn(page, adminKey());
    await page.goto(`/cluster/nodes/${node.id}`);
    await page.getByTestId('node-drain').click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText(`Drain ${node.name}?`);
    await expect(page.getByTestId('confirm-cancel')).toBeFocused();
    await page.getByTestId('confirm-cancel').click();
    await expect(dialog).toHaveCount(0);
    await expect(page.getByTestId('node-detail')).toHaveAttribute('data-state', 'ready');
    expect((await client(adminKey()).nodes.get(node.id)).state).toBe('ready');
  });

  for (const w of WIDTHS) {
    test(`a tenant admin's Overview at ${w.width} px: "Teams against quota" shows every column, no hidden scroll`, async ({ page }) => {
      await page.setViewportSize({ width: w.width, height: w.height });
      await signIn(page, demoKey('tenant admin, Acme AI'));
      await page.goto('/');
      await settled(page);
      const card = page.getByTestId('team-usage');
      await expect(card.getByTestId('team-usage-row').first()).toBeVisible();
      await expectFits(page, `overview (tenant admin) @${w.width}`, w.width);
      const { tableWidth, boxWidth, lastColumnRight, boxRight } = await card.evaluate((el) => {
        const table = el.querySelector('table')!;
        const last = table.querySelector('thead th:last-child')!;
        return {
          tableWidth: table.scrollWidth,
          boxWidth: el.clientWidth,
          lastColumnRight: last.getBoundingClientRect().right,
          boxRight: el.getBoundingClientRect().right,
        };
      });
      if (w.width >= 1440) {
        // on a desktop the whole table sits in its card: the last column (cost) is on screen, nothing scrolls
        expect(tableWidth).toBeLessThanOrEqual(boxWidth);
        expect(lastColumnRight).toBeLessThanOrEqual(boxRight + 1);
      }
    });
  }

  test('a job that went through starting in a blink still shows it on its page, with how long it lasted', async ({ page }) => {
    const max = client(demoKey('Max (member)'));
    const me = await max.me();
    const job = await max.jobs.create({
      teamId: me.teamId!,
      name: `screens-starting-${Date.now()}`,
      kind: 'training',
      resources: { gpus: 1 },
      simulation: { durationSeconds: 600 },
    });
    try {
      await until(async () => (await max.jobs.get(job.id)).state === 'running');
      await signIn(page, demoKey('Max (member)'));
      await page.goto(`/jobs/${job.id}`);
      const path = page.getByTestId('job-state-path');
      await expect(path.locator('[data-state="pending"]')).toBeVisible();
      await expect(path.locator('[data-state="starting"]')).toContainText(/starting\s*[\d.]+/);
      await expect(path.locator('[data-state="running"]')).toBeVisible();
    } finally {
      await max.jobs.cancel(job.id);
    }
  });
});
