-- CreateTable
CREATE TABLE "TeamUsageHistory" (
    "teamId" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "decayedGpuSeconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "asOf" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "TeamUsageHistory_pkey" PRIMARY KEY ("teamId")
);

-- CreateIndex
CREATE INDEX "TeamUsageHistory_tenantId_idx" ON "TeamUsageHistory"("tenantId");

-- AddForeignKey
ALTER TABLE "TeamUsageHistory" ADD CONSTRAINT "TeamUsageHistory_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- The history row's team belongs to the row tenant (as migration team_in_tenant does for team-owned rows).
ALTER TABLE "TeamUsageHistory" ADD CONSTRAINT "TeamUsageHistory_team_in_tenant_fkey" FOREIGN KEY ("teamId", "tenantId") REFERENCES "Team"("id", "tenantId") ON DELETE CASCADE ON UPDATE CASCADE;
