import { expect, test, type Page } from '@playwright/test';
import { client, demoKey, until } from '../support';

async function signIn(page: Page, key: string) {
  await page.goto('/login');
  await page.getByTestId('login-api-key').fill(key);
  await page.getByTestId('login-submit').click();
  await expect(page.getByTestId('nav-endpoints')).toBeVisible();
}

test.describe('console: endpoints', () => {
  test('an endpoint at zero: a test request cold-starts a replica, traffic shows, the slider scales, the scale-to-zero setting saves', async ({ page }) => {
    const key = demoKey('Max (member)');
    const api = client(key);
    const me = await api.me();
    const ep = await api.endpoints.create({
      teamId: me.teamId!,
      name: 'ui-llm',
      model: 'llama-3-8b-instruct',
      resources: { gpus: 1, gpuModel: 'A100-80GB' },
      minReplicas: 0,
      maxReplicas: 3,
      scaleToZeroAfterSeconds: 300,
    });

    await signIn(page, key);
    await page.getByTestId('nav-endpoints').click();
    const card = page.locator(`[data-testid="endpoint-card"][data-endpoint-id="${ep.id}"]`);
    await expect(card).toHaveAttribute('data-state', 'scaled-to-zero');
    await expect(card.getByTestId('endpoint-scale-to-zero')).toBeChecked();
    await expect(card.getByTestId('endpoint-idle-seconds')).toHaveValue('300');
    await page.screenshot({ path: 'test-results/endpoints-at-zero.png', fullPage: true });

    // A test request at zero: the activator holds it while a replica is placed and loads the model.
    await card.getByTestId('endpoint-invoke').click();
    await expect(card.getByTestId('endpoint-invoke-result')).toHaveAttribute('data-cold-start', 'true', { timeout: 30_000 });
    await expect(card).toHaveAttribute('data-state', 'ready');
    await expect(card.getByTestId('endpoint-cold-count')).toHaveText('1');
    await expect(card.getByTestId('endpoint-cold-p50')).toHaveText(/\d/);

    // Simulated traffic appears on the sparkline.
    await api.sim.traffic({ endpointId: ep.id, rps: 40, durationSeconds: 30 });
    await expect(card.getByTestId('endpoint-rps')).not.toHaveText('0');

    // The slider: 2 replicas; beyond maxReplicas the API's 409 reason is shown (through the SDK).
    await card.getByTestId('endpoint-scale-slider').fill('2');
    await expect(card.getByTestId('endpoint-scale-value')).toHaveText('2');
    await card.getByTestId('endpoint-scale-apply').click();
    await expect(card.getByTestId('endpoint-replicas')).toHaveAttribute('data-ready', '2', { timeout: 30_000 });
    await page.screenshot({ path: 'test-results/endpoints-scaled.png', fullPage: true });

    // Scale-to-zero setting: idle time saved through PATCH.
    await card.getByTestId('endpoint-idle-seconds').fill('120');
    await card.getByTestId('endpoint-idle-save').click();
    await until(async () => (await api.endpoints.get(ep.id)).scaleToZeroAfterSeconds === 120);
    await card.getByTestId('endpoint-scale-to-zero').uncheck();
    await until(async () => (await api.endpoints.get(ep.id)).minReplicas === 1);
    await expect(card.getByTestId('endpoint-scale-to-zero')).not.toBeChecked();

    await api.endpoints.remove(ep.id);
  });
});
