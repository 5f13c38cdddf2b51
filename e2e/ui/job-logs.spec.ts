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

test.describe('console: job logs', () => {
  test("the job page follows a running job's log, and keeps it after a cancel", async ({ page }) => {
    test.setTimeout(300_000);
    const key = demoKey('Max (member)');
    const api = client(key);
    const me = await api.me();
    const job = await api.jobs.create({
      teamId: me.teamId!,
      name: 'ui-logs',
      kind: 'training',
      replicas: 2,
      resources: { gpus: 1, gpuModel: 'H100-80GB' },
      simulation: { durationSeconds: 3600 },
    });
    await until(async () => (await api.jobs.get(job.id)).state === 'running', 60_000);

    await signIn(page, key);
    await page.goto(`/jobs/${job.id}`);
    const log = page.getByTestId('job-logs');
    await expect(log.getByTestId('job-log-line').filter({ hasText: /\[rank 1\] node h100-/ })).toHaveCount(1, { timeout: 30_000 });
    // following: progress lines keep arriving without a reload
    const progress = log.getByTestId('job-log-line').filter({ hasText: / loss \d+\.\d{4} / });
    await expect(progress.first()).toBeVisible({ timeout: 30_000 });
    const before = await progress.count();
    await expect.poll(() => progress.count(), { timeout: 60_000 }).toBeGreaterThan(before);
    await expect(log).toHaveAttribute('data-following', 'true');

    await page.getByTestId('job-detail').getByTestId('job-cancel').first().click();
    await page.getByTestId('job-cancel-confirm').click();
    await expect(page.getByTestId('job-detail')).toHaveAttribute('data-state', 'cancelled', { timeout: 30_000 });
    await expect(log.getByTestId('job-log-line').filter({ hasText: /SIGTERM received: stopping at step \d+/ })).toHaveCount(1, { timeout: 40_000 });
    // another tenant cannot read it
    await expect(client(demoKey('Globex Labs')).jobs.logs(job.id)).rejects.toMatchObject({ status: 404 });
  });
});
