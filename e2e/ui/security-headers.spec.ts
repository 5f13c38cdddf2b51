import { expect, test, type APIResponse, type Page } from '@playwright/test';

/**
 * The console's security headers (next.config.ts): a Content-Security-Policy that forbids
 * framing and other origins, X-Frame-Options, nosniff and a Referrer-Policy on every page and
 * asset; and the console still works under that policy (no violation while it is used).
 */
const adminKey = () => {
  const k = process.env.E2E_ADMIN_KEY;
  if (!k) throw new Error('E2E_ADMIN_KEY is not set: run through scripts/e2e.sh');
  return k;
};

function expectSecurityHeaders(res: APIResponse, what: string) {
  const h = res.headers();
  expect(res.status(), what).toBe(200);
  const csp = new Map(
    h['content-security-policy']!.split(';')
      .map((d) => d.trim().split(/\s+/))
      .map(([k, ...v]) => [k!, v]),
  );
  expect(csp.get('frame-ancestors'), what).toEqual(["'none'"]);
  expect(csp.get('default-src'), what).toEqual(["'self'"]);
  expect(csp.get('object-src'), what).toEqual(["'none'"]);
  // Scripts only from the console itself (Next's inline bootstrap needs 'unsafe-inline'; no eval in production).
  expect(csp.get('script-src'), what).toEqual(["'self'", "'unsafe-inline'"]);
  expect(h['x-frame-options'], what).toBe('DENY');
  expect(h['x-content-type-options'], what).toBe('nosniff');
  expect(h['referrer-policy'], what).toBe('strict-origin-when-cross-origin');
}

/** Collects every CSP violation the page reports (and the console messages Chromium logs for them). */
async function watchViolations(page: Page): Promise<string[]> {
  const violations: string[] = [];
  await page.exposeFunction('__reportCspViolation', (v: string) => violations.push(v));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      (window as unknown as { __reportCspViolation: (v: string) => void }).__reportCspViolation(
        `${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`,
      );
    });
  });
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  return violations;
}

test.describe('console security headers', () => {
  test('every page and asset carries the CSP, X-Frame-Options, nosniff and Referrer-Policy', async ({ page, request }) => {
    for (const path of ['/login', '/', '/jobs', '/cluster', '/utilization', '/icon.svg']) expectSecurityHeaders(await request.get(path), path);
    // The scripts and styles the login page loads, too.
    await page.goto('/login');
    const assets = await page.evaluate(() => [
      ...[...document.querySelectorAll('script[src]')].map((s) => (s as HTMLScriptElement).src),
      ...[...document.querySelectorAll('link[rel="stylesheet"]')].map((l) => (l as HTMLLinkElement).href),
    ]);
    expect(assets.length).toBeGreaterThan(0);
    for (const url of assets) {
      expect(new URL(url).origin, url).toBe(new URL(page.url()).origin);
      expectSecurityHeaders(await request.get(url), url);
    }
  });

  test('the console works under its policy: sign in, pages, charts and the heatmap without a violation', async ({ page }) => {
    const violations = await watchViolations(page);
    await page.goto('/login');
    await page.getByTestId('login-api-key').fill(adminKey());
    await page.getByTestId('login-submit').click();
    await expect(page.getByTestId('whoami-name')).toBeVisible();
    await expect(page.getByTestId('capacity-summary')).toBeVisible();
    for (const [nav, ready] of [
      ['nav-jobs', 'jobs-state-filter'],
      ['nav-cluster', 'topology'],
      ['nav-heatmap', 'heatmap-canvas'],
      ['nav-utilization', 'utilization-group-by'],
    ] as const) {
      await page.getByTestId(nav).click();
      await expect(page.getByTestId(ready)).toBeVisible();
    }
    await page.getByTestId('nav-overview').click();
    await expect(page.getByTestId('overview-utilization')).toBeVisible();
    expect(violations).toEqual([]);
  });

  test('no page of the console can be framed, not even by itself', async ({ page }) => {
    await page.goto('/login');
    const origin = new URL(page.url()).origin;
    await page.setContent(`<iframe id="f" src="${origin}/login" width="400" height="300"></iframe>`);
    await page.waitForTimeout(1500);
    // Chromium refuses to render it (frame-ancestors 'none', X-Frame-Options DENY): no sign-in form in the frame.
    const framed = page.frames().filter((f) => f !== page.mainFrame());
    for (const f of framed) expect(await f.locator('[data-testid="login-api-key"]').count()).toBe(0);
  });

  test("the API's Swagger UI at /docs renders under its own policy (no violation)", async ({ page }) => {
    const api = process.env.E2E_API_URL ?? 'http://127.0.0.1:4100';
    const violations = await watchViolations(page);
    const res = await page.goto(`${api}/docs`);
    expect(res!.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(res!.headers()['x-frame-options']).toBe('DENY');
    await expect(page.locator('.swagger-ui .info .title')).toContainText('Gantry API');
    await expect(page.locator('.opblock').first()).toBeVisible();
    expect(violations).toEqual([]);
  });
});
