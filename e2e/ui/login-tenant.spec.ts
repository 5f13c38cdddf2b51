import { expect, test } from '@playwright/test';
import { client, demoKeys } from '../support';

/**
 * An e-mail address is unique per tenant: when the same address and password open accounts in
 * two tenants, the console asks which tenant to sign in to.
 */
const adminKey = () => {
  const k = process.env.E2E_ADMIN_KEY;
  if (!k) throw new Error('E2E_ADMIN_KEY is not set: run through scripts/e2e.sh');
  return k;
};

test('the same e-mail and password in two tenants: the console asks for the tenant, then signs in to it', async ({ page }) => {
  const { tenants } = demoKeys();
  const admin = client(adminKey());
  const email = `both-${Date.now()}@tenants.example`;
  const password = 'tangerine-estuary-31-cranes';
  await admin.users.create({ email, name: 'Both (Acme)', password, role: 'tenant-admin', tenantId: tenants.acme });
  await admin.users.create({ email, name: 'Both (Globex)', password, role: 'tenant-admin', tenantId: tenants.globex });

  await page.goto('/login');
  await expect(page.getByTestId('login-tenant')).toHaveCount(0);
  await page.getByTestId('login-email').fill(email);
  await page.getByTestId('login-password').fill(password);
  await page.getByTestId('login-password-submit').click();
  await expect(page.getByTestId('login-password-error')).toContainText('more than one tenant');
  await page.getByTestId('login-tenant').fill('globex');
  await page.getByTestId('login-password-submit').click();
  await expect(page.getByTestId('whoami-name')).toContainText('Both (Globex)');
});
