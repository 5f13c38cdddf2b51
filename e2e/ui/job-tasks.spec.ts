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

test.describe('console: job tasks', () => {
  test('the MIG profile is chosen from the catalog for the chosen model', async ({ page }) => {
    await signIn(page, demoKey('Max (member)'));
    await page.getByTestId('nav-jobs').click();
    await page.getByTestId('job-submit-open').click();
    const dialog = page.getByTestId('submit-dialog');
    await dialog.getByTestId('submit-gpu-model').selectOption('H100-80GB');
    await dialog.getByTestId('submit-resource-type').selectOption('mig');
    const profile = dialog.getByTestId('submit-mig-profile');
    expect(await profile.evaluate((el) => el.tagName)).toBe('SELECT');
    const values = await profile.locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(values).toEqual(['1g.10gb', '1g.10gb+me', '1g.20gb', '2g.20gb', '3g.40gb', '4g.40gb', '7g.80gb']);
    await profile.selectOption('3g.40gb');
    await expect(profile.locator('option:checked')).toHaveText(/3g\.40gb · 3\/7 compute, 40 GB/);
  });

  test('an ended job shows where it ran, and resubmits as it was', async ({ page }) => {
    const key = demoKey('Max (member)');
    const api = client(key);
    const me = await api.me();
    const job = await api.jobs.create({
      teamId: me.teamId!,
      name: 'ui-ran-on',
      kind: 'batch',
      resources: { gpus: 1, gpuModel: 'H100-80GB' },
      simulation: { durationSeconds: 5 },
    });
    const done = await until(async () => {
      const j = await api.jobs.get(job.id);
      return j.state === 'succeeded' && j;
    }, 45_000);
    expect(done.placement).toEqual([]);
    expect(done.ranOn?.[0]?.nodeName).toMatch(/^h100-/);
    const nodeName = done.ranOn![0]!.nodeName;

    await signIn(page, key);
    await page.getByTestId('nav-jobs').click();
    const row = page.locator(`[data-testid="job-row"][data-job-id="${job.id}"]`);
    await expect(row.getByTestId('job-ran-on')).toHaveText(`ran on ${nodeName}`);

    await row.getByTestId('job-link').click();
    await expect(page.getByTestId('job-detail')).toHaveAttribute('data-state', 'succeeded');
    await expect(page.getByTestId('job-last-placement').getByTestId('placement-row')).toHaveAttribute('data-node-name', nodeName);

    // Resubmit: the dialog comes filled as the job was submitted, under the next name
    await page.getByTestId('job-clone').click();
    const dialog = page.getByTestId('submit-dialog');
    await expect(dialog.getByTestId('submit-name')).toHaveValue('ui-ran-on-2');
    await expect(dialog.getByTestId('submit-kind')).toHaveValue('batch');
    await expect(dialog.getByTestId('submit-gpu-model')).toHaveValue('H100-80GB');
    await expect(dialog.getByTestId('submit-gpus')).toHaveValue('1');
    await expect(dialog.getByTestId('submit-duration')).toHaveValue('5');
    await dialog.getByTestId('submit-job').click();
    await expect(page.getByTestId('job-detail')).toHaveAttribute('data-job-name', 'ui-ran-on-2');
    const cloneId = (await page.getByTestId('job-detail').getAttribute('data-job-id'))!;
    expect(cloneId).not.toBe(job.id);
    expect(await api.jobs.get(cloneId)).toMatchObject({
      name: 'ui-ran-on-2',
      kind: 'batch',
      resources: { gpus: 1, gpuModel: 'H100-80GB' },
      simulation: { durationSeconds: 5 },
    });
  });

  test('a suspend keeps the progress a person sees: it never drops back to 0 % on the way to suspended', async ({ page }) => {
    const key = demoKey('Max (member)');
    const max = client(key);
    const me = await max.me();
    const job = await max.jobs.create({
      teamId: me.teamId!,
      name: `progress-suspend-${Date.now()}`,
      kind: 'training',
      resources: { gpus: 1 },
      simulation: { durationSeconds: 3000 },
    });
    try {
      await until(async () => ((await max.jobs.get(job.id)).progress ?? 0) > 0.01, 60_000);
      await signIn(page, key);
      await page.goto(`/jobs/${job.id}`);
      const bar = page.getByTestId('job-progress');
      await expect(bar).toBeVisible();
      // every value the page shows from here on, recorded in the page as it changes
      await page.evaluate(() => {
        const w = window as unknown as { seen: number[] };
        w.seen = [];
        const el = document.querySelector('[data-testid="job-progress"]')!;
        w.seen.push(Number(el.getAttribute('data-progress')));
        new MutationObserver(() => {
          const now = document.querySelector('[data-testid="job-progress"]');
          w.seen.push(now ? Number(now.getAttribute('data-progress')) : -1);
        }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-progress'] });
      });
      await page.getByTestId('job-suspend').click();
      await page.getByTestId('job-suspend-confirm').click();
      await expect(page.getByTestId('job-state').first()).toHaveAttribute('data-state', 'suspended', { timeout: 60_000 });
      const seen = await page.evaluate(() => (window as unknown as { seen: number[] }).seen);
      expect(seen.length).toBeGreaterThan(1);
      // the bar stays on the page and never falls back (suspending runs on until the checkpoint).
      // While running, the API estimates progress from when the driver accepted the start, so the
      // checkpoint (the driver's own count, after the container start) may settle a hair below the
      // last estimate: a step back under one percentage point is that correction, not a reset.
      expect(Math.min(...seen)).toBeGreaterThan(0);
      for (let i = 1; i < seen.length; i++) expect(seen[i]!, `progress went back at sample ${i}: ${seen.join(', ')}`).toBeGreaterThan(seen[i - 1]! - 0.01);
    } finally {
      await max.jobs.cancel(job.id).catch(() => undefined);
    }
  });
});
