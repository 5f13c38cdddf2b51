-- CreateEnum
CREATE TYPE "ScheduleAction" AS ENUM ('suspend', 'resume');

-- CreateTable
CREATE TABLE "SuspendSchedule" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "jobId" TEXT,
    "action" "ScheduleAction" NOT NULL,
    "cron" TEXT NOT NULL,
    "timeZone" TEXT NOT NULL,
    "lastRunAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SuspendSchedule_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "SuspendSchedule_tenantId_teamId_idx" ON "SuspendSchedule"("tenantId", "teamId");

-- AddForeignKey
ALTER TABLE "SuspendSchedule" ADD CONSTRAINT "SuspendSchedule_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SuspendSchedule" ADD CONSTRAINT "SuspendSchedule_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

