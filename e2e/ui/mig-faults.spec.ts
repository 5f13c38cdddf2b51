import { expect, test, type Page } from '@playwright/test';
import { client, demoKey } from '../support';

/** The MIG layout editor and the fault actions on a node (operators). */
const adminKey = () => {
  const k = process.env.E2E_ADMIN_KEY;
  if (!k) throw new Error('E2E_ADMIN_KEY is not set: run through scripts/e2e.sh');
  return k;
};

async function signIn(page: Page, key: string) {
  await page.goto('/login');
  await expect(async () => {
    await page.getByTestId('login-api-key').fill(key);
    await page.getByTestId('login-submit').click();
    await expect(page.getByTestId('nav-cluster')).toBeVisible({ timeout: 5_000 });
  }).toPass({ timeout: 40_000 });
}

/** An idle, ready A100 node (every change here is undone). */
async function idleA100Node(pick: 'first' | 'second') {
  const nodes = (await client(adminKey()).nodes.list({ gpuModel: 'A100-80GB', state: 'ready', limit: 100 })).items;
  const idle = nodes.filter((n) => n.gpusAllocated === 0 && n.persona === 'container');
  return pick === 'first' ? idle[0]! : idle[1]!;
}

test.describe('MIG layout editor and faults (admin)', () => {
  test('place profiles on the memory slots: the rules are checked live with the API names, the capacity change is previewed, then applied', async ({
    page,
  }) => {
    const node = await idleA100Node('first');
    const api = client(adminKey());
    const gpu = (await api.nodes.get(node.id)).gpus.find((g) => g.index === 1)!;
    await signIn(page, adminKey());
    await page.goto(`/cluster/nodes/${node.id}`);
    const row = page.locator('[data-testid="gpu-row"][data-gpu-index="1"]');
    await row.getByTestId('mig-edit').click();
    const editor = page.getByTestId('mig-editor');
    await expect(editor.getByTestId('mig-palette-profile')).toHaveCount(7);
    await expect(editor.getByTestId('mig-capacity-before')).toHaveText('whole GPU (MIG off)');

    // 3g.40gb at memory slot 2: not a legal start; the editor names the rule the API answers with
    await editor.getByLabel(/^3g\.40gb/).check();
    await editor.locator('[data-testid="mig-slot-button"][data-slot="2"]').click();
    const validation = editor.getByTestId('mig-validation');
    await expect(validation).toHaveAttribute('data-rule', 'illegal_start');
    await expect(editor.getByTestId('mig-apply')).toBeDisabled();
    const refused = await fetch(`${process.env.E2E_API_URL}/v1/gpus/${gpu.id}/mig`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${adminKey()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ layout: [{ profile: '3g.40gb', start: 2 }] }),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('rule illegal_start');

    // remove it (click the placed slice), place 3g.40gb at 0 and 4, and 1g.10gb+me twice -> multiple_me
    await editor.locator('[data-testid="mig-slot-button"][data-slot="2"]').click();
    await expect(validation).toHaveAttribute('data-valid', 'true');
    await editor.locator('[data-testid="mig-slot-button"][data-slot="0"]').click();
    await editor.locator('[data-testid="mig-slot-button"][data-slot="4"]').click();
    await expect(validation).toHaveAttribute('data-valid', 'true');
    await expect(editor.getByTestId('mig-capacity-after')).toHaveText('2 x 3g.40gb');
    await expect(editor.getByTestId('mig-capacity')).toContainText('6/7 compute · 8/8 memory partitioned · 1 compute left unused');
    await expect(editor.getByTestId('mig-draft').getByTestId('mig-slice')).toHaveCount(2);
    await page.screenshot({ path: 'test-results/mig-editor.png', fullPage: true });

    await editor.getByTestId('mig-apply').click();
    await expect(editor).toHaveCount(0);
    await expect(row).toHaveAttribute('data-mode', 'mig', { timeout: 20_000 });
    await expect(row).toHaveAttribute('data-schedulable', 'true');
    await expect(row.getByTestId('mig-layout').getByTestId('mig-slice')).toHaveCount(2);

    // back to a whole GPU: the editor starts from the applied layout
    await row.getByTestId('mig-edit').click();
    await expect(editor.getByTestId('mig-capacity-before')).toHaveText('2 x 3g.40gb');
    await expect(editor.getByTestId('mig-apply')).toHaveText('No change');
    await editor.locator('[data-testid="mig-slot-button"][data-slot="0"]').click();
    await editor.locator('[data-testid="mig-slot-button"][data-slot="4"]').click();
    await expect(editor.getByTestId('mig-capacity-after')).toHaveText('whole GPU (MIG off)');
    await editor.getByTestId('mig-apply').click();
    await expect(row).toHaveAttribute('data-mode', 'whole', { timeout: 20_000 });
  });

  test('inject an Xid on a GPU and take a node down from the console; the incident loop handles both; recover', async ({ page }) => {
    test.setTimeout(150_000);
    const node = await idleA100Node('second');
    const api = client(adminKey());
    await signIn(page, adminKey());
    await page.goto(`/cluster/nodes/${node.id}`);
    const panel = page.getByTestId('fault-injector');
    await panel.getByTestId('fault-kind').selectOption('xid');
    await panel.getByTestId('fault-gpu').selectOption('5');
    await panel.getByTestId('fault-xid').selectOption('48');
    await panel.getByTestId('fault-inject').click();
    await expect(panel.getByTestId('fault-confirm')).toContainText(`Xid 48 on GPU 5 of ${node.name}`);
    await panel.getByTestId('fault-inject-confirm').click();
    await expect(panel.getByTestId('fault-accepted')).toBeVisible();
    const incident = async (kind: string) => (await api.incidents.list({ nodeId: node.id })).items.find((i) => i.kind === kind);
    await expect.poll(async () => (await incident('xid'))?.xid, { timeout: 30_000 }).toBe(48);
    await expect.poll(async () => (await incident('xid'))?.gpuIndex).toBe(5);
    await expect.poll(async () => (await incident('xid'))?.state, { timeout: 60_000 }).toBe('resolved');

    // node down, then recover it from the console
    await panel.getByTestId('fault-kind').selectOption('node-down');
    await panel.getByTestId('fault-inject').click();
    await panel.getByTestId('fault-inject-confirm').click();
    await expect.poll(async () => (await incident('node-down'))?.nodeId, { timeout: 30_000 }).toBe(node.id);
    await panel.getByTestId('fault-kind').selectOption('recover');
    await panel.getByTestId('fault-inject').click();
    await panel.getByTestId('fault-inject-confirm').click();
    await expect(panel.getByTestId('fault-accepted')).toHaveAttribute('data-kind', 'recover');
    await expect.poll(async () => (await api.nodes.get(node.id)).state, { timeout: 60_000 }).toBe('ready');
  });

  test('a member sees neither the MIG editor nor the fault actions', async ({ page }) => {
    const node = await idleA100Node('first');
    await signIn(page, demoKey('Max (member)'));
    await page.goto(`/cluster/nodes/${node.id}`);
    await expect(page.getByTestId('node-detail')).toBeVisible();
    await expect(page.getByTestId('mig-edit')).toHaveCount(0);
    await expect(page.getByTestId('fault-injector')).toHaveCount(0);
  });
});
