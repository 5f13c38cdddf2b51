-- CreateTable
CREATE TABLE "GpuTelemetry" (
    "gpuId" TEXT NOT NULL,
    "nodeId" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "smPct" DOUBLE PRECISION NOT NULL,
    "memoryUsedMiB" INTEGER NOT NULL,
    "powerW" DOUBLE PRECISION NOT NULL,
    "idleSince" TIMESTAMP(3),

    CONSTRAINT "GpuTelemetry_pkey" PRIMARY KEY ("gpuId")
);

-- CreateTable
CREATE TABLE "GpuSample" (
    "gpuId" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "smPct" DOUBLE PRECISION NOT NULL,
    "memoryUsedMiB" INTEGER NOT NULL,
    "powerW" DOUBLE PRECISION NOT NULL,

    CONSTRAINT "GpuSample_pkey" PRIMARY KEY ("gpuId","at")
);

-- CreateTable
CREATE TABLE "UsageRollup" (
    "stepSeconds" INTEGER NOT NULL,
    "bucket" TIMESTAMP(3) NOT NULL,
    "nodeId" TEXT NOT NULL,
    "gpuModel" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "capacitySeconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "allocatedSeconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "busySeconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "memoryMiBSeconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "energyJoules" DOUBLE PRECISION NOT NULL DEFAULT 0,

    CONSTRAINT "UsageRollup_pkey" PRIMARY KEY ("stepSeconds","bucket","nodeId","gpuModel","tenantId","teamId")
);

-- CreateIndex
CREATE INDEX "GpuSample_at_idx" ON "GpuSample"("at");

-- CreateIndex
CREATE INDEX "UsageRollup_stepSeconds_tenantId_bucket_idx" ON "UsageRollup"("stepSeconds", "tenantId", "bucket");

