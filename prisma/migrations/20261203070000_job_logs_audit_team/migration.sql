-- CreateTable
CREATE TABLE "JobLogLine" (
    "jobId" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "replica" INTEGER NOT NULL,
    "seq" BIGINT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "stream" TEXT NOT NULL DEFAULT 'stdout',
    "text" TEXT NOT NULL,

    CONSTRAINT "JobLogLine_pkey" PRIMARY KEY ("jobId","replica","seq")
);

-- CreateIndex
CREATE INDEX "JobLogLine_jobId_at_idx" ON "JobLogLine"("jobId", "at");

-- AddForeignKey
ALTER TABLE "JobLogLine" ADD CONSTRAINT "JobLogLine_jobId_fkey" FOREIGN KEY ("jobId") REFERENCES "Job"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The line's team belongs to its tenant (as migration team_in_tenant does for team-owned rows).
ALTER TABLE "JobLogLine" ADD CONSTRAINT "JobLogLine_team_in_tenant_fkey" FOREIGN KEY ("teamId", "tenantId") REFERENCES "Team"("id", "tenantId") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AlterTable: the team an audited action was about (a team admin reads its team's rows)
ALTER TABLE "AuditLog" ADD COLUMN "teamId" TEXT;

-- CreateIndex
CREATE INDEX "AuditLog_teamId_createdAt_idx" ON "AuditLog"("teamId", "createdAt");
