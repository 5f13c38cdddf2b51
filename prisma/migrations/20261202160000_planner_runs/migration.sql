-- CreateEnum
CREATE TYPE "PlannerRunStatus" AS ENUM ('queued', 'running', 'succeeded', 'failed', 'cancelled');

-- CreateTable
CREATE TABLE "PlannerRun" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT,
    "createdByKeyId" TEXT NOT NULL,
    "status" "PlannerRunStatus" NOT NULL DEFAULT 'queued',
    "progress" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "spec" JSONB NOT NULL,
    "policies" TEXT[],
    "result" JSONB,
    "error" TEXT,
    "cancelRequested" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" TIMESTAMP(3),
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "PlannerRun_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "PlannerRun_tenantId_createdAt_idx" ON "PlannerRun"("tenantId", "createdAt");

