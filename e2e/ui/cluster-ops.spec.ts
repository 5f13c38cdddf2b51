import { expect, test, type Page } from '@playwright/test';
import { client, until } from '../support';

/** Node manager in the console: node actions, personas with progress, the MIG drawing, incidents. */
const adminKey = () => {
  const k = process.env.E2E_ADMIN_KEY;
  if (!k) throw new Error('E2E_ADMIN_KEY is not set: run through scripts/e2e.sh');
  return k;
};

async function signIn(page: Page, key: string) {
  await page.goto('/login');
  // a click before hydration is lost on a busy machine: retry until the console shows
  await expect(async () => {
    await page.getByTestId('login-api-key').fill(key);
    await page.getByTestId('login-submit').click();
    await expect(page.getByTestId('nav-cluster')).toBeVisible({ timeout: 5_000 });
  }).toPass({ timeout: 40_000 });
}

/** An idle, ready A100 node (the jobs specs use H100 capacity; every change here is undone). */
async function idleA100Node(skip: string[] = []) {
  const api = client(adminKey());
  const nodes = (await api.nodes.list({ gpuModel: 'A100-80GB', state: 'ready', limit: 100 })).items;
  const idle = nodes.filter((n) => n.gpusAllocated === 0 && n.persona === 'container' && !skip.includes(n.id));
  return idle[idle.length - 1]!;
}

test.describe('cluster operations (admin)', () => {
  test('cordon and uncordon a node, apply a MIG layout drawn as 7 compute / 8 memory slots', async ({ page }) => {
    const node = await idleA100Node();
    await signIn(page, adminKey());
    await page.goto(`/cluster/nodes/${node.id}`);
    const detail = page.getByTestId('node-detail');
    await expect(detail).toHaveAttribute('data-state', 'ready');

    await page.getByTestId('node-cordon').click();
    // cordon asks first; nothing changes until confirmed
    await expect(page.getByTestId('confirm-dialog')).toContainText('No new work will be placed');
    await expect(detail).toHaveAttribute('data-state', 'ready');
    await page.getByTestId('confirm-accept').click();
    await expect(detail).toHaveAttribute('data-state', 'cordoned');
    await expect(page.getByTestId('node-state-reason')).toContainText(/cordoned by/);
    await page.getByTestId('node-uncordon').click();
    await expect(detail).toHaveAttribute('data-state', 'ready');

    const row = page.locator('[data-testid="gpu-row"][data-gpu-index="0"]');
    await row.getByTestId('mig-edit').click();
    await page.getByTestId('mig-editor').getByRole('button', { name: 'balanced: 2 x 1g.10gb + 2g.20gb + 3g.40gb' }).click();
    await page.getByTestId('mig-editor').getByTestId('mig-apply').click();
    await expect(row).toHaveAttribute('data-mode', 'mig', { timeout: 20_000 });
    await expect(row).toHaveAttribute('data-schedulable', 'true');
    const drawing = row.getByTestId('mig-layout');
    await expect(drawing.getByTestId('mig-compute-slot')).toHaveCount(7);
    await expect(drawing.getByTestId('mig-memory-slot')).toHaveCount(8);
    await expect(drawing.getByTestId('mig-slice')).toHaveCount(4);
    await expect(drawing.locator('[data-testid="mig-slice"][data-profile="3g.40gb"]')).toHaveAttribute('data-start', '4');
    await page.screenshot({ path: 'test-results/node-mig.png', fullPage: true });

    // an invalid request is refused by the API with the rule named (the console's editor checks the same rules before sending)
    const bad = await fetch(`${process.env.E2E_API_URL}/v1/gpus/${(await client(adminKey()).nodes.get(node.id)).gpus[0]!.id}/mig`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${adminKey()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ layout: [{ profile: '3g.40gb', start: 2 }] }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/illegal_start/);

    await row.getByTestId('mig-edit').click();
    await page.getByTestId('mig-editor').getByRole('button', { name: 'MIG off (whole GPU)' }).click();
    await page.getByTestId('mig-editor').getByTestId('mig-apply').click();
    await expect(row).toHaveAttribute('data-mode', 'whole', { timeout: 20_000 });
  });

  test('switch a node persona from the console: progress with ETA, then the new persona; and back', async ({ page }) => {
    test.setTimeout(120_000);
    const node = await idleA100Node();
    await signIn(page, adminKey());
    await page.goto(`/cluster/nodes/${node.id}`);
    const detail = page.getByTestId('node-detail');
    await page.getByTestId('node-persona-select').selectOption('vm-passthrough');
    await page.getByTestId('node-persona-switch').click();
    await page.getByTestId('confirm-accept').click();
    await expect(detail).toHaveAttribute('data-state', 'switching');
    const transition = page.getByTestId('node-transition');
    await expect(transition).toHaveAttribute('data-kind', 'persona-switch');
    await expect(transition).toContainText(/switching to vm-passthrough .*ETA/);
    await page.screenshot({ path: 'test-results/node-switching.png', fullPage: true });

    await page.getByTestId('nav-cluster').click();
    const card = page.locator(`[data-testid="node-card"][data-node-id="${node.id}"]`);
    await expect(card).toHaveAttribute('data-state', 'switching');
    await expect(card.getByTestId('node-transition')).toBeVisible();
    await expect(card).toHaveAttribute('data-persona', 'vm-passthrough', { timeout: 60_000 });
    await expect(card).toHaveAttribute('data-state', 'ready');

    // back to containers (the other specs expect every node in the container persona)
    await client(adminKey()).nodes.setPersona(node.id, 'container');
    await until(async () => {
      const n = await client(adminKey()).nodes.get(node.id);
      return n.persona === 'container' && n.state === 'ready';
    }, 60_000);
  });

  test('an injected Xid shows on the Incidents page with the actions taken and its MTTR', async ({ page }) => {
    const node = await idleA100Node();
    const api = client(adminKey());
    await api.sim.fault({ nodeId: node.id, gpuIndex: 3, kind: 'xid', xid: 79 });
    await signIn(page, adminKey());
    await page.getByTestId('nav-incidents').click();
    const card = page.locator('[data-testid="incident"][data-kind="xid"][data-xid="79"]').first();
    await expect(card).toBeVisible();
    await expect(card).toHaveAttribute('data-state', 'resolved', { timeout: 30_000 });
    await expect(card.getByTestId('incident-mttr')).toContainText(/MTTR/);
    // unresolved incidents open with their timeline; a resolved one opens on click
    if (!(await card.getByTestId('incident-timeline').isVisible())) await card.locator('.incident-head').click();
    const steps = card.getByTestId('incident-step');
    await expect(steps.and(page.locator('[data-step="quarantined"]'))).toBeVisible();
    await expect(steps.and(page.locator('[data-step="validated"]'))).toBeVisible();
    await expect(steps.and(page.locator('[data-step="resolved"]'))).toBeVisible();
    // the operator's integrity panel: the books balance after the failover (nothing stuck, nothing double-booked)
    await expect(page.getByTestId('integrity')).toHaveAttribute('data-ok', 'true');
    await expect(page.getByTestId('integrity')).toContainText(/no invariant violated/);
    await page.getByTestId('integrity-settled').check();
    await expect(page.getByTestId('integrity')).toHaveAttribute('data-settled', 'true');
    await page.screenshot({ path: 'test-results/incidents.png', fullPage: true });
    expect((await api.nodes.get(node.id)).gpus[3]!.health).toBe('healthy');
  });

  test('a member without cluster:admin sees no node actions', async ({ page }) => {
    const { demoKey } = await import('../support');
    const node = await idleA100Node();
    await signIn(page, demoKey('Max (member)'));
    await page.goto(`/cluster/nodes/${node.id}`);
    await expect(page.getByTestId('node-detail')).toBeVisible();
    await expect(page.getByTestId('node-actions')).toHaveCount(0);
    await page.goto('/incidents');
    await expect(page.getByRole('heading', { name: 'Incidents' })).toBeVisible();
    await expect(page.getByTestId('integrity')).toHaveCount(0);
  });
});
