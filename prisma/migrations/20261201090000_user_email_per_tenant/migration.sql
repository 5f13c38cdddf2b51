-- An e-mail address is unique per tenant, not across tenants: creating a user must not tell
-- whether an address is taken in another tenant. Sign-in by e-mail looks up every account with
-- the address (User_email_idx) and checks the password against each.

-- DropIndex
DROP INDEX "User_email_key";

-- CreateIndex
CREATE INDEX "User_email_idx" ON "User"("email");

-- CreateIndex
CREATE UNIQUE INDEX "User_tenantId_email_key" ON "User"("tenantId", "email");
