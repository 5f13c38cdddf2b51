import { expect, test, type Page } from '@playwright/test';
import { client, demoKey, until } from '../support';

async function signIn(page: Page, key: string) {
  await page.goto('/login');
  await page.getByTestId('login-api-key').fill(key);
  await page.getByTestId('login-submit').click();
  await expect(page.getByTestId('nav-jobs')).toBeVisible();
}

test.describe('console', () => {
  test('a job submitted in the console waits pending, then runs and succeeds', async ({ page }) => {
    const key = demoKey('Max (member)');
    const api = client(key);
    const me = await api.me();
    // Fill every H100 so that the console's job has to wait for capacity.
    const blocker = await api.jobs.create({
      teamId: me.teamId!,
      name: 'e2e-h100-blocker',
      kind: 'training',
      replicas: 16,
      resources: { gpus: 8, gpuModel: 'H100-80GB' },
    });
    await until(async () => (await api.jobs.get(blocker.id)).state === 'running');

    await signIn(page, key);
    await page.getByTestId('nav-jobs').click();
    await page.getByTestId('job-submit-open').click();
    await page.getByTestId('submit-name').fill('ui-train');
    await page.getByTestId('submit-resource-type').selectOption('gpus');
    await page.getByTestId('submit-gpus').fill('2');
    await page.getByTestId('submit-gpu-model').selectOption('H100-80GB');
    await page.getByTestId('submit-duration').fill('20');
    await page.getByTestId('submit-job').click();

    const row = page.locator('[data-testid="job-row"][data-job-name="ui-train"]');
    await expect(row).toHaveAttribute('data-state', 'pending');
    await expect(row.getByTestId('job-reason')).toContainText(/GPU|free|nodes/i);
    await expect(row.getByTestId('job-queue-position')).toBeVisible();

    await api.jobs.cancel(blocker.id);
    await expect(row).toHaveAttribute('data-state', 'running', { timeout: 30_000 });
    await expect(row.getByTestId('job-state')).toHaveText(/running/i);
    await expect(row).toHaveAttribute('data-state', 'succeeded', { timeout: 45_000 });
    await page.screenshot({ path: 'test-results/jobs-succeeded.png', fullPage: true });

    await row.getByTestId('job-link').click();
    await expect(page.getByTestId('job-detail')).toHaveAttribute('data-state', 'succeeded');
    await expect(
      page
        .getByTestId('job-event')
        .filter({ hasText: /placed/i })
        .first(),
    ).toBeVisible();
  });

  test('one click suspends a running job, freeing its GPUs, and one click resumes it', async ({ page }) => {
    const key = demoKey('Max (member)');
    const api = client(key);
    const me = await api.me();
    const job = await api.jobs.create({
      teamId: me.teamId!,
      name: 'ui-notebook',
      kind: 'notebook',
      resources: { gpus: 1, gpuModel: 'A100-80GB' },
      simulation: { durationSeconds: 3000 },
    });
    await until(async () => (await api.jobs.get(job.id)).state === 'running');

    await signIn(page, key);
    await page.goto(`/jobs/${job.id}`);
    const detail = page.getByTestId('job-detail');
    await expect(detail).toHaveAttribute('data-state', 'running');
    await page.getByTestId('job-suspend').click();
    await page.getByTestId('job-suspend-confirm').click();
    await expect(detail).toHaveAttribute('data-state', 'suspended', { timeout: 30_000 });
    expect((await api.jobs.get(job.id)).placement).toEqual([]);
    await page.screenshot({ path: 'test-results/job-suspended.png', fullPage: true });

    await page.getByTestId('job-resume').click();
    await page.getByTestId('job-resume-confirm').click();
    await expect(detail).toHaveAttribute('data-state', 'running', { timeout: 30_000 });
    const resumed = await api.jobs.get(job.id);
    expect(resumed.events.map((e) => e.type)).toEqual(expect.arrayContaining(['job.suspended', 'job.resumed']));

    await page.getByTestId('job-cancel').click();
    await page.getByTestId('job-cancel-confirm').click();
    await expect(detail).toHaveAttribute('data-state', 'cancelled');
  });

  test('the overview shows the cluster capacity by GPU model and the cluster page every node', async ({ page }) => {
    await signIn(page, demoKey('Max (member)'));
    await page.getByTestId('nav-overview').click();
    const h100 = page.locator('[data-testid="capacity-card"][data-gpu-model="H100-80GB"]');
    await expect(h100.getByTestId('capacity-total')).toHaveText(/128/);
    await expect(page.locator('[data-testid="capacity-card"][data-gpu-model="A100-80GB"]')).toBeVisible();
    await page.getByTestId('nav-cluster').click();
    await expect(page.getByTestId('node-card')).toHaveCount(36);
    await expect(page.getByTestId('gpu-cell')).toHaveCount(288);
    await page.screenshot({ path: 'test-results/cluster.png', fullPage: true });
  });

  test('a wrong key is refused at sign-in', async ({ page }) => {
    await page.goto('/login');
    await page.getByTestId('login-api-key').fill('gk_wrongkey1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    await page.getByTestId('login-submit').click();
    await expect(page.getByTestId('login-error')).toBeVisible();
  });

  test('a key sign-in leaves no key in the browser: only an httpOnly session cookie, which dies with the key', async ({ page, context }) => {
    const admin = client(process.env.E2E_ADMIN_KEY!);
    const me = await client(demoKey('Max (member)')).me();
    const made = await admin.apiKeys.create({
      name: 'e2e console key',
      tenantId: me.tenantId!,
      teamId: me.teamId!,
      role: 'member',
      scopes: ['jobs:read', 'cluster:read'],
    });
    await signIn(page, made.key);
    const stored = await page.evaluate(() => JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookies: document.cookie }));
    expect(stored).not.toContain(made.key);
    expect(stored).not.toContain('gk_');
    const session = (await context.cookies()).find((c) => c.name === 'gantry_session');
    expect(session?.httpOnly).toBe(true);
    await admin.apiKeys.revoke(made.id);
    await page.reload();
    await expect(page.getByTestId('login-api-key')).toBeVisible();
  });
});
