import { expect, test, type Page } from '@playwright/test';
import { client, demoKey } from '../support';

/** Reservations: the week calendar per GPU model, the create form, the 409 naming the conflict, and tenant isolation. */
async function signIn(page: Page, key: string) {
  await page.goto('/login');
  await page.getByTestId('login-api-key').fill(key);
  await page.getByTestId('login-submit').click();
  await expect(page.getByTestId('nav-reservations')).toBeVisible();
}

/** datetime-local value for an ISO instant, in the browser's zone (the test pins UTC below). */
const local = (iso: string) => iso.slice(0, 16);

test.describe('reservations', () => {
  test.use({ timezoneId: 'UTC' });

  test('a tenant admin reserves whole nodes for next week: a bar on the calendar; an overlap beyond capacity is refused naming it; another tenant sees nothing', async ({
    page,
  }) => {
    test.setTimeout(120_000);
    const key = demoKey('tenant admin, Acme AI');
    const api = client(key);
    const me = await api.me();
    const team = (await api.teams.list(me.tenantId!)).items.find((t) => t.name === 'Research')!;
    // Next week's Monday 08:00-12:00 UTC: nothing else of this test's runs is there.
    const monday = new Date();
    monday.setUTCDate(monday.getUTCDate() + ((8 - monday.getUTCDay()) % 7 || 7));
    const stamp = Date.now().toString(36);
    const start = `${monday.toISOString().slice(0, 10)}T08:00:00.000Z`;
    const end = `${monday.toISOString().slice(0, 10)}T12:00:00.000Z`;
    const capacity = (await api.reservations.list()).capacity.find((c) => c.gpuModel === 'H100-80GB')!;
    expect(capacity.gpusPerNode).toBe(8);

    await signIn(page, key);
    await page.getByTestId('nav-reservations').click();
    await page.getByTestId('res-model').selectOption('H100-80GB');
    await page.getByTestId('res-team').selectOption(team.id);
    await page.getByTestId('res-name').fill(`launch ${stamp}`);
    await page.getByTestId('res-form-model').selectOption('H100-80GB');
    await page.getByTestId('res-size').selectOption('nodes');
    await page.getByTestId('res-count').fill('2');
    await page.getByTestId('res-start').fill(local(start));
    await page.getByTestId('res-end').fill(local(end));
    await page.getByTestId('res-submit').click();
    await expect(page.getByTestId('res-created')).toContainText(`launch ${stamp}`);

    await page.getByTestId('res-next').click();
    const item = page.getByTestId('res-item').filter({ hasText: `launch ${stamp}` });
    await expect(item).toContainText('2 nodes (16 GPUs)');
    await expect(item.getByTestId('res-bar')).toHaveCount(1);
    await expect(item.getByTestId('res-bar')).toHaveAttribute(
      'aria-label',
      new RegExp(`16 GPUs from ${start.slice(0, 10)} 08:00 to ${start.slice(0, 10)} 12:00`),
    );

    // The rest of the model plus one GPU: more than the team's quota limit, 409 naming gpus and the limit.
    await page.getByTestId('res-name').fill(`too much ${stamp}`);
    await page.getByTestId('res-size').selectOption('gpus');
    await page.getByTestId('res-count').fill(String(capacity.gpus - 16 + 1));
    await page.getByTestId('res-start').fill(local(start));
    await page.getByTestId('res-end').fill(local(end));
    await page.getByTestId('res-submit').click();
    const error = page.getByTestId('res-error');
    await expect(error).toContainText(`needs ${capacity.gpus - 16 + 1} GPUs > limit`);

    // The rest of the model held by smaller reservations (each within the quota), then one GPU
    // more in the same stretch: 409 naming this reservation and the window.
    const fillers: string[] = [];
    for (let left = capacity.gpus - 16; left > 0; left -= 16) {
      const f = await api.reservations.create({
        teamId: team.id,
        name: `filler ${stamp}`,
        gpuModel: 'H100-80GB',
        gpus: Math.min(16, left),
        startsAt: start,
        endsAt: end,
      });
      fillers.push(f.id);
    }
    await page.getByTestId('res-count').fill('1');
    await page.getByTestId('res-submit').click();
    await expect(error).toContainText(`"launch ${stamp}"`);
    await expect(error).toContainText(`${start.slice(0, 10)}T08:00:00.000Z`);
    for (const id of fillers) await api.reservations.remove(id);

    const mine = (await api.reservations.list({ from: start, to: end })).items.find((r) => r.name === `launch ${stamp}`)!;
    // Another tenant: its list never shows it (or, without quotas:read, it may not list at all); the id is 404.
    const globex = client(demoKey('Globex'));
    const seen = await globex.reservations.list({ from: start, to: end }).then(
      (l) => l.items.map((r) => r.id),
      () => [] as string[],
    );
    expect(seen).not.toContain(mine.id);
    const status = await globex.reservations.get(mine.id).then(
      () => 200,
      (e: { status: number }) => e.status,
    );
    expect([403, 404]).toContain(status);
    await api.reservations.remove(mine.id);
  });

  test('a tenant admin edits a reservation in the form and deletes it; the calendar follows', async ({ page }) => {
    test.setTimeout(120_000);
    const key = demoKey('tenant admin, Acme AI');
    const api = client(key);
    const me = await api.me();
    const team = (await api.teams.list(me.tenantId!)).items.find((t) => t.name === 'Research')!;
    // The Tuesday of the week after next, 13:00-15:00 UTC.
    const tuesday = new Date();
    tuesday.setUTCDate(tuesday.getUTCDate() + ((8 - tuesday.getUTCDay()) % 7 || 7) + 8);
    const day = tuesday.toISOString().slice(0, 10);
    const stamp = Date.now().toString(36);
    const made = await api.reservations.create({
      teamId: team.id,
      name: `edit me ${stamp}`,
      gpuModel: 'H100-80GB',
      gpus: 4,
      startsAt: `${day}T13:00:00Z`,
      endsAt: `${day}T15:00:00Z`,
    });

    await signIn(page, key);
    await page.getByTestId('nav-reservations').click();
    await expect(page.getByTestId('res-zone-name')).toHaveText('(UTC)');
    await page.getByTestId('res-model').selectOption('H100-80GB');
    await page.getByTestId('res-next').click();
    await page.getByTestId('res-next').click();
    const item = page.locator(`[data-testid="res-item"][data-reservation-id="${made.id}"]`);
    await expect(item).toContainText('4 GPUs');
    await item.getByTestId('res-edit').click();
    await expect(page.getByTestId('res-name')).toHaveValue(`edit me ${stamp}`);
    await page.getByTestId('res-name').fill(`edited ${stamp}`);
    await page.getByTestId('res-size').selectOption('nodes');
    await page.getByTestId('res-count').fill('1');
    await page.getByTestId('res-end').fill(`${day}T17:00`);
    await page.getByTestId('res-submit').click();
    await expect(item).toContainText(`edited ${stamp}`);
    await expect(item).toContainText('1 node (8 GPUs)');
    await expect(item.getByTestId('res-bar')).toHaveAttribute('aria-label', new RegExp(`8 GPUs from ${day} 13:00 to ${day} 17:00 UTC`));
    expect(await api.reservations.get(made.id)).toMatchObject({ name: `edited ${stamp}`, nodes: 1, gpus: null, endsAt: `${day}T17:00:00.000Z` });

    await item.getByTestId('res-delete').click();
    await expect(item).toHaveCount(0);
    expect(
      await api.reservations.get(made.id).then(
        () => 200,
        (e: { status: number }) => e.status,
      ),
    ).toBe(404);
  });
});

test.describe('reservations in the viewer’s time zone', () => {
  test.use({ timezoneId: 'Asia/Tokyo' });

  test('the calendar names the browser’s zone and shows the windows in it', async ({ page }) => {
    const key = demoKey('tenant admin, Acme AI');
    const api = client(key);
    const me = await api.me();
    const team = (await api.teams.list(me.tenantId!)).items.find((t) => t.name === 'Research')!;
    // Next week's Wednesday as the calendar counts weeks (from Monday in the browser's zone, Tokyo:
    // UTC+9 all year, so on a Sunday evening UTC Tokyo's week has already turned), 10:00-12:00 there
    // = 01:00-03:00 UTC that day.
    const tokyoNow = new Date(Date.now() + 9 * 3600_000); // Tokyo's wall clock, read with the UTC getters
    const wednesday = new Date(tokyoNow);
    wednesday.setUTCDate(tokyoNow.getUTCDate() - ((tokyoNow.getUTCDay() + 6) % 7) + 7 + 2);
    const day = wednesday.toISOString().slice(0, 10);
    const made = await api.reservations.create({
      teamId: team.id,
      name: `tokyo ${Date.now().toString(36)}`,
      gpuModel: 'H100-80GB',
      gpus: 2,
      startsAt: `${day}T01:00:00Z`,
      endsAt: `${day}T03:00:00Z`,
    });
    try {
      await signIn(page, key);
      await page.getByTestId('nav-reservations').click();
      await expect(page.getByTestId('res-zone-name')).toHaveText('(Asia/Tokyo)');
      await page.getByTestId('res-model').selectOption('H100-80GB');
      await page.getByTestId('res-next').click();
      const bar = page.locator(`[data-testid="res-item"][data-reservation-id="${made.id}"] [data-testid="res-bar"]`);
      await expect(bar).toHaveAttribute('aria-label', new RegExp(`2 GPUs from ${day} 10:00 to ${day} 12:00 Asia/Tokyo`));
      // The selector switches the calendar to UTC.
      await page.getByTestId('res-zone').selectOption('UTC');
      await expect(page.getByTestId('res-zone-name')).toHaveText('(UTC)');
    } finally {
      await api.reservations.remove(made.id);
    }
  });
});
