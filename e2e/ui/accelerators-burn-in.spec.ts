import { expect, test } from '@playwright/test';
import { adminKey, client, signIn } from '../support';

/**
 * An MI300X's partition mode from its node page (the mode picker), and the burn-in of repaired
 * hardware from the console: a latent fault fails it twice, the incident waits for a person, who
 * retries the burn-in and then releases the GPU.
 */
test.describe('MI300X partition mode picker (admin)', () => {
  test('CPX/NPS4 applied from the node page splits the GPU into 8 partitions; NPS4 without CPX is refused with the reason shown', async ({ page }) => {
    test.setTimeout(90_000);
    const api = client(adminKey());
    const nodes = (await api.nodes.list({ gpuModel: 'MI300X-192GB', state: 'ready', limit: 100 })).items;
    test.skip(
      nodes.length === 0,
      'the cluster has no MI300X: run with GANTRY_SIM_CLUSTER=packages/driver/topologies/demo-accelerators.json scripts/e2e.sh --project=ui ui/accelerators-burn-in.spec.ts',
    );
    const node = nodes.find((n) => n.gpusAllocated === 0) ?? nodes[0]!;
    const detail = await api.nodes.get(node.id);
    const gpu = detail.gpus.find((g) => g.mode === 'whole' && !g.jobId)!;
    await signIn(page, adminKey());
    await page.goto(`/cluster/nodes/${node.id}`);
    const row = page.locator(`[data-testid="gpu-row"][data-gpu-index="${gpu.index}"]`);
    await expect(row.getByTestId('mig-edit')).toHaveText('Change mode');
    await row.getByTestId('mig-edit').click();
    const editor = page.getByTestId('mig-editor');

    // QPX: NPS4 is not offered, and the picker says why
    await editor.locator('[data-testid="compute-mode"][value="QPX"]').check();
    await expect(editor.locator('[data-testid="memory-mode"][value="NPS4"]')).toBeDisabled();
    await expect(editor.locator('[data-testid="memory-mode-refused"][data-mode="NPS4"]')).toContainText('NPS4 on MI300X-192GB allows only CPX (got QPX)');

    // CPX, then NPS4: 8 partitions of 24 GB
    await editor.locator('[data-testid="compute-mode"][value="CPX"]').check();
    await editor.locator('[data-testid="memory-mode"][value="NPS4"]').check();
    await expect(editor.locator('[data-testid="memory-mode-refused"]')).toHaveCount(0);
    await expect(editor.getByTestId('mig-capacity-after')).toContainText('cpx_nps4');
    await editor.getByTestId('mig-apply').click();
    await expect
      .poll(async () => (await api.nodes.get(node.id)).gpus.find((g) => g.index === gpu.index)!.mig?.layout.map((s) => s.profile), { timeout: 60_000 })
      .toEqual(Array(8).fill('cpx_nps4'));
    await page.reload();
    await expect(row.getByTestId('mig-layout').locator('.mig-slice.mig-compute')).toHaveCount(8);

    // back to SPX (the whole GPU) for the other specs
    const put = await fetch(`${process.env.E2E_API_URL}/v1/gpus/${gpu.id}/mig`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${adminKey()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ layout: [] }),
    });
    expect(put.status).toBeLessThan(300);
  });
});

test.describe('burn-in of repaired hardware (admin)', () => {
  test('a latent fault fails the burn-in twice: needs-attention; Retry burn-in runs it again; Release puts the GPU back into service', async ({ page }) => {
    test.setTimeout(180_000);
    const api = client(adminKey());
    const nodes = (await api.nodes.list({ gpuModel: 'H100-80GB', state: 'ready', limit: 100 })).items;
    const node = nodes.filter((n) => n.gpusAllocated === 0 && n.persona === 'container').at(-1)!;
    await signIn(page, adminKey());
    await page.goto(`/cluster/nodes/${node.id}`);
    const panel = page.getByTestId('fault-injector');
    // the defect idle checks miss, then the Xid that sends the GPU through reset and burn-in
    await panel.getByTestId('fault-kind').selectOption('latent');
    await panel.getByTestId('fault-gpu').selectOption('6');
    await panel.getByTestId('fault-inject').click();
    await expect(panel.getByTestId('fault-confirm')).toContainText(`a latent fault on GPU 6 of ${node.name}`);
    await panel.getByTestId('fault-inject-confirm').click();
    await expect(panel.getByTestId('fault-accepted')).toHaveAttribute('data-kind', 'latent');
    await panel.getByTestId('fault-kind').selectOption('xid');
    await panel.getByTestId('fault-gpu').selectOption('6');
    await panel.getByTestId('fault-xid').selectOption('79');
    await panel.getByTestId('fault-inject').click();
    await panel.getByTestId('fault-inject-confirm').click();
    await expect(panel.getByTestId('fault-accepted')).toHaveAttribute('data-kind', 'xid');

    const incident = async () => (await api.incidents.list({ nodeId: node.id })).items.find((i) => i.kind === 'xid' && i.gpuIndex === 6);
    await expect.poll(async () => (await incident())?.state, { timeout: 90_000 }).toBe('needs-attention');
    const id = (await incident())!.id;

    await page.goto('/incidents');
    const card = page.locator(`[data-testid="incident"][data-incident-id="${id}"]`);
    await expect(card).toHaveAttribute('data-state', 'needs-attention');
    await expect(card.getByTestId('incident-answer')).toContainText('failed burn-in 2 time(s)');
    // the list refreshes while the loop works: open the steps until they stay open
    const toggle = card.getByTestId('incident-toggle');
    await expect(async () => {
      if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
      await expect(toggle).toHaveAttribute('aria-expanded', 'true', { timeout: 2_000 });
    }).toPass({ timeout: 20_000 });
    await expect(card.locator('[data-testid="incident-step"][data-step="burn-in-failed"]')).toHaveCount(2);
    await expect(card.locator('[data-testid="burn-in-findings"] li[data-result="fail"]').first()).toContainText('GPU 6');

    // Retry burn-in: it runs again (the part was not replaced, so it fails again, twice)
    await card.getByTestId('incident-retry-burn-in').click();
    await expect.poll(async () => (await incident())!.timeline.filter((s) => s.step === 'burn-in-failed').length, { timeout: 60_000 }).toBe(4);
    await expect(card).toHaveAttribute('data-state', 'needs-attention', { timeout: 30_000 });

    // Release: back into service without a pass, after a confirmation
    await card.getByTestId('incident-release').click();
    await page.getByTestId('confirm-accept').click();
    await expect(card).toHaveAttribute('data-state', 'resolved', { timeout: 30_000 });
    await expect.poll(async () => (await api.nodes.get(node.id)).gpus.find((g) => g.index === 6)!.health, { timeout: 30_000 }).toBe('healthy');
    await api.sim.fault({ nodeId: node.id, kind: 'recover', gpuIndex: 6 });
  });
});
