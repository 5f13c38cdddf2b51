-- Rollup rows with nodeId '' sum every node: team, tenant and model reports read only those.
-- DropIndex
DROP INDEX "UsageRollup_stepSeconds_tenantId_bucket_idx";

-- CreateIndex
CREATE INDEX "UsageRollup_stepSeconds_nodeId_tenantId_bucket_idx" ON "UsageRollup"("stepSeconds", "nodeId", "tenantId", "bucket");
