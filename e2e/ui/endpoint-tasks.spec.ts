import { expect, test, type Page } from '@playwright/test';
import { client, demoKey, until } from '../support';

async function signIn(page: Page, key: string) {
  await page.goto('/login');
  await page.getByTestId('login-api-key').fill(key);
  await page.getByTestId('login-submit').click();
  await expect(page.getByTestId('nav-endpoints')).toBeVisible();
}

test.describe('console: endpoint tasks', () => {
  test('create an endpoint from the console, call it with the copied request, edit it, see its cold starts, delete it', async ({ page, request }) => {
    const key = demoKey('Max (member)');
    const api = client(key);
    await signIn(page, key);
    await page.getByTestId('nav-endpoints').click();

    // Create: the GPU resources come from the catalog; a MIG profile list follows the chosen model.
    await page.getByTestId('endpoint-create-open').click();
    const dialog = page.getByTestId('endpoint-create-dialog');
    await dialog.getByTestId('endpoint-create-gpu-model').selectOption('H100-80GB');
    await dialog.getByTestId('endpoint-create-resource-type').selectOption('mig');
    const profiles = await dialog
      .getByTestId('endpoint-create-mig-profile')
      .locator('option')
      .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(profiles).toEqual(['1g.10gb', '1g.10gb+me', '1g.20gb', '2g.20gb', '3g.40gb', '4g.40gb', '7g.80gb']);
    await dialog.getByTestId('endpoint-create-gpu-model').selectOption('A100-80GB');
    await dialog.getByTestId('endpoint-create-resource-type').selectOption('gpus');
    await dialog.getByTestId('endpoint-create-name').fill('ui-created-llm');
    await dialog.getByTestId('endpoint-create-model').fill('mistral-7b-instruct');
    await dialog.getByTestId('endpoint-create-gpus').fill('1');
    // min above max: the API's 400 is shown under the field, nothing is created
    await dialog.getByTestId('endpoint-create-minReplicas').fill('3');
    await dialog.getByTestId('endpoint-create-maxReplicas').fill('2');
    await dialog.getByTestId('endpoint-create-submit').click();
    await expect(dialog.locator('[data-testid="field-error"][data-field="minReplicas"]')).toBeVisible();
    expect((await api.endpoints.list()).items.some((e) => e.name === 'ui-created-llm')).toBe(false);
    await dialog.getByTestId('endpoint-create-minReplicas').fill('0');
    await dialog.getByTestId('endpoint-create-scaleToZeroAfterSeconds').fill('300');
    await dialog.getByTestId('endpoint-create-submit').click();
    await expect(page.getByTestId('endpoint-create-success')).toBeVisible();
    const ep = (await api.endpoints.list()).items.find((e) => e.name === 'ui-created-llm')!;
    expect(ep).toMatchObject({
      model: 'mistral-7b-instruct',
      minReplicas: 0,
      maxReplicas: 2,
      scaleToZeroAfterSeconds: 300,
      resources: { gpus: 1, gpuModel: 'A100-80GB' },
    });

    // Detail page: the URL and a ready-to-copy request; the request works as shown (through the console's origin).
    await page.locator(`[data-testid="endpoint-card"][data-endpoint-id="${ep.id}"]`).getByTestId('endpoint-link').click();
    const detail = page.getByTestId('endpoint-detail');
    await expect(detail).toHaveAttribute('data-endpoint-id', ep.id);
    await expect(detail).toHaveAttribute('data-state', 'scaled-to-zero');
    const curl = (await page.getByTestId('endpoint-curl').textContent())!;
    const url = /curl -X POST '([^']+)'/.exec(curl)![1]!;
    expect(url).toBe(`${new URL(page.url()).origin}/v1/endpoints/${ep.id}/invoke`);
    expect(curl).toContain('Authorization: Bearer $GANTRY_API_KEY');
    const res = await request.post(url, {
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      data: { input: 'Hello!' },
      timeout: 60_000,
    });
    expect(res.status()).toBe(200);
    expect(await res.json()).toMatchObject({ endpointId: ep.id, coldStart: true });

    // The cold start it caused is listed; the replica shows with its node.
    await expect(page.getByTestId('cold-start-row')).toHaveCount(1);
    await expect(page.getByTestId('cold-start-row').first()).toHaveAttribute('data-warm', 'false');
    await expect(page.getByTestId('endpoint-replica-row').first()).toHaveAttribute('data-state', 'ready');
    await expect(page.getByTestId('endpoint-traffic')).toHaveAttribute('data-points', '60');
    await page.screenshot({ path: 'test-results/endpoint-detail.png', fullPage: true });

    // Edit: a refused change shows the API's reason; a good one is saved.
    await page.getByTestId('endpoint-settings-minReplicas').fill('4');
    await page.getByTestId('endpoint-settings-save').click();
    await expect(page.getByTestId('endpoint-settings-error')).toBeVisible();
    await expect(page.getByTestId('endpoint-settings').locator('[data-testid="field-error"][data-field="minReplicas"]')).toBeVisible();
    await page.getByTestId('endpoint-settings-minReplicas').fill('0');
    await page.getByTestId('endpoint-settings-maxReplicas').fill('3');
    await page.getByTestId('endpoint-settings-targetConcurrency').fill('40');
    await page.getByTestId('endpoint-settings-model').fill('mistral-7b-instruct-v2');
    await page.getByTestId('endpoint-settings-save').click();
    await expect(page.getByTestId('endpoint-settings-saved')).toBeVisible();
    expect(await api.endpoints.get(ep.id)).toMatchObject({ maxReplicas: 3, targetConcurrency: 40, model: 'mistral-7b-instruct-v2' });

    // Delete, confirmed: back to the list, and the API no longer has it.
    await page.getByTestId('endpoint-delete').click();
    await page.getByTestId('endpoint-delete-yes').click();
    await expect(page).toHaveURL(/\/endpoints$/);
    await until(
      async () =>
        (await api.endpoints.get(ep.id).then(
          () => false,
          (e: { status?: number }) => e.status === 404,
        )) || undefined,
    );
    await expect(page.locator(`[data-testid="endpoint-card"][data-endpoint-id="${ep.id}"]`)).toHaveCount(0);
  });
});
