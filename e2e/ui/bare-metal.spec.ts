import { expect, test, type Page } from '@playwright/test';
import { client, demoKey } from '../support';

/** Bare metal: request whole nodes, watch them provisioned, suspend, resume and release them (docs/bare-metal.md). */
async function signIn(page: Page, key: string) {
  await page.goto('/login');
  await page.getByTestId('login-api-key').fill(key);
  await page.getByTestId('login-submit').click();
  await expect(page.getByTestId('nav-bare-metal')).toBeVisible();
}

test.describe('bare metal', () => {
  test.setTimeout(300_000);

  test('a member requests a node, sees it deployed with its GPUs held, suspends, resumes and releases it, each confirmed', async ({ page }) => {
    const key = demoKey('Max (member)');
    const name = `bm-ui-${Date.now().toString(36)}`;
    await signIn(page, key);
    await page.getByTestId('nav-bare-metal').click();
    await page.getByTestId('bm-open').click();

    // Too many nodes: the form says which field and why.
    await page.getByTestId('bm-name').fill(name);
    await page.getByTestId('bm-model').selectOption('A100-80GB');
    await page.getByTestId('bm-count').fill('40');
    await page.getByTestId('bm-submit').click();
    await expect(page.getByTestId('bare-metal-error')).toContainText(/nodes/);
    await expect(page.getByTestId('bm-count')).toHaveAttribute('aria-invalid', 'true');

    await page.getByTestId('bm-count').fill('1');
    await page.getByTestId('bm-image').fill('ubuntu-22.04-cuda-12.4');
    await page.getByTestId('bm-submit').click();
    await expect(page.getByTestId('bm-created')).toContainText(name);

    const row = page.locator(`[data-testid="bm-row"][data-name="${name}"]`);
    await expect(row).toHaveAttribute('data-state', 'deployed', { timeout: 180_000 });
    await expect(row.getByTestId('bm-node')).toHaveCount(1);
    await expect(row.getByTestId('bm-gpus')).toHaveText('8');

    // Its events: the lease's states and the node's steps, on the lease's row...
    await row.getByTestId('bm-events').locator('summary').click();
    await expect(row.locator('[data-testid="bm-event"][data-type="bare-metal.requested"]')).toHaveCount(1);
    await expect(row.locator('[data-testid="bm-event"][data-type="node.bare-metal.provisioning"]')).toContainText('held by bare-metal lease');
    await expect(row.locator('[data-testid="bm-event"][data-type="bare-metal.deployed"]')).toHaveCount(1);
    // ...and on the node's page, with the badge naming the step and the team; the Cluster page marks it too.
    const held = (await client(key).bareMetal.list()).items.find((l) => l.name === name)!.nodes[0]!;
    await page.goto(`/cluster/nodes/${held.id}`);
    await expect(page.getByTestId('node-bare-metal')).toHaveText(/bare metal: deployed · Research/);
    await expect(page.locator('[data-testid="node-event"][data-type="node.bare-metal.deployed"]')).toContainText(name);
    await page.getByTestId('nav-cluster').click();
    await expect(page.locator(`[data-testid="node-card"][data-node-id="${held.id}"] [data-testid="node-bare-metal"]`)).toContainText('bare metal: deployed');
    // Another tenant sees only that the node is bare metal: no lease, no team, none of its events.
    const theirs = await client(demoKey('Globex')).nodes.get(held.id);
    expect(theirs.bareMetal).toEqual({ state: 'deployed' });
    expect(theirs.events.some((e) => e.type.startsWith('node.bare-metal.'))).toBe(false);
    await page.getByTestId('nav-bare-metal').click();

    // Suspend asks first; Keep does nothing.
    await row.getByTestId('bm-suspend').click();
    await expect(row.getByTestId('bm-action-confirm')).toContainText('Power the nodes off');
    await row.getByRole('button', { name: 'Keep' }).click();
    await expect(row).toHaveAttribute('data-state', 'deployed');

    await row.getByTestId('bm-suspend').click();
    await row.getByTestId('bm-suspend-confirm').click();
    await expect(row).toHaveAttribute('data-state', 'suspended', { timeout: 120_000 });
    await expect(row.getByTestId('bm-node')).toContainText('powered-off');
    await expect(row.getByTestId('bm-gpus')).toHaveText('8');

    await row.getByTestId('bm-resume').click();
    await row.getByTestId('bm-resume-confirm').click();
    await expect(row).toHaveAttribute('data-state', 'deployed', { timeout: 120_000 });

    await row.getByTestId('bm-release').click();
    await expect(row.getByTestId('bm-action-confirm')).toContainText('Wipe the disks');
    await row.getByTestId('bm-release-confirm').click();
    await expect(row).toHaveAttribute('data-state', 'released', { timeout: 180_000 });
    await expect(row.getByTestId('bm-gpus')).toHaveText('0');

    // The API agrees, and another tenant does not see it.
    const mine = (await client(key).bareMetal.list()).items.find((l) => l.name === name);
    expect(mine?.state).toBe('released');
    const globex = await client(demoKey('Globex')).bareMetal.list();
    expect(globex.items.some((l) => l.name === name)).toBe(false);
  });
});
