-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "Role" AS ENUM ('platform-admin', 'tenant-admin', 'team-admin', 'member', 'viewer');

-- CreateEnum
CREATE TYPE "JobKind" AS ENUM ('training', 'batch', 'notebook', 'vm', 'cluster');

-- CreateEnum
CREATE TYPE "JobState" AS ENUM ('pending', 'starting', 'running', 'suspending', 'suspended', 'succeeded', 'failed', 'cancelled');

-- CreateEnum
CREATE TYPE "Priority" AS ENUM ('critical', 'high', 'normal', 'low');

-- CreateEnum
CREATE TYPE "Persona" AS ENUM ('container', 'vm-passthrough', 'inference');

-- CreateEnum
CREATE TYPE "NodeState" AS ENUM ('ready', 'cordoned', 'draining', 'switching', 'down');

-- CreateEnum
CREATE TYPE "GpuHealth" AS ENUM ('healthy', 'degraded', 'unhealthy');

-- CreateEnum
CREATE TYPE "GpuMode" AS ENUM ('whole', 'mig', 'shared');

-- CreateTable
CREATE TABLE "Tenant" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "gpuTotal" DECIMAL(10,3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Tenant_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Team" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "weight" DECIMAL(6,3) NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Team_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "User" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT,
    "teamId" TEXT,
    "email" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "passwordHash" TEXT,
    "role" "Role" NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "User_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ApiKey" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT,
    "teamId" TEXT,
    "userId" TEXT,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "role" "Role" NOT NULL,
    "scopes" TEXT[],
    "expiresAt" TIMESTAMP(3),
    "revokedAt" TIMESTAMP(3),
    "lastUsedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ApiKey_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Quota" (
    "id" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "gpuModel" TEXT NOT NULL,
    "guaranteed" DECIMAL(10,3) NOT NULL,
    "limit" DECIMAL(10,3) NOT NULL,
    "gpuHourBudget" DECIMAL(12,3),
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Quota_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Spine" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,

    CONSTRAINT "Spine_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Leaf" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "spineId" TEXT NOT NULL,

    CONSTRAINT "Leaf_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Node" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "leafId" TEXT NOT NULL,
    "persona" "Persona" NOT NULL DEFAULT 'container',
    "state" "NodeState" NOT NULL DEFAULT 'ready',
    "stateReason" TEXT,
    "cpuMilli" INTEGER NOT NULL,
    "memoryMiB" INTEGER NOT NULL,
    "labels" JSONB NOT NULL DEFAULT '{}',
    "heartbeatAt" TIMESTAMP(3),
    "version" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Node_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Gpu" (
    "id" TEXT NOT NULL,
    "nodeId" TEXT NOT NULL,
    "index" INTEGER NOT NULL,
    "model" TEXT NOT NULL,
    "memoryMiB" INTEGER NOT NULL,
    "nvlinkDomain" INTEGER NOT NULL DEFAULT 0,
    "migCapable" BOOLEAN NOT NULL DEFAULT false,
    "health" "GpuHealth" NOT NULL DEFAULT 'healthy',
    "mode" "GpuMode" NOT NULL DEFAULT 'whole',
    "schedulable" BOOLEAN NOT NULL DEFAULT true,
    "version" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "Gpu_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "GpuInstance" (
    "id" TEXT NOT NULL,
    "gpuId" TEXT NOT NULL,
    "profile" TEXT NOT NULL,
    "start" INTEGER NOT NULL,
    "size" INTEGER NOT NULL,

    CONSTRAINT "GpuInstance_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Job" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "kind" "JobKind" NOT NULL,
    "state" "JobState" NOT NULL DEFAULT 'pending',
    "priority" "Priority" NOT NULL DEFAULT 'normal',
    "replicas" INTEGER NOT NULL,
    "resources" JSONB NOT NULL,
    "topologyLevel" TEXT NOT NULL DEFAULT 'any',
    "topologyRequired" BOOLEAN NOT NULL DEFAULT false,
    "preemptible" BOOLEAN NOT NULL DEFAULT false,
    "durationSeconds" DOUBLE PRECISION,
    "progressSeconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "checkpoint" TEXT,
    "reasons" JSONB NOT NULL DEFAULT '[]',
    "idempotencyKey" TEXT,
    "createdByKeyId" TEXT,
    "version" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" TIMESTAMP(3),
    "runningSince" TIMESTAMP(3),
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "Job_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Allocation" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "jobId" TEXT,
    "endpointId" TEXT,
    "replica" INTEGER NOT NULL,
    "nodeId" TEXT NOT NULL,
    "gpuId" TEXT NOT NULL,
    "gpuModel" TEXT NOT NULL,
    "migProfile" TEXT,
    "migStart" INTEGER,
    "milli" INTEGER NOT NULL DEFAULT 1000,
    "gpuUnits" DECIMAL(10,4) NOT NULL,
    "cpuMilli" INTEGER NOT NULL DEFAULT 0,
    "memoryMiB" INTEGER NOT NULL DEFAULT 0,
    "activeSlot" TEXT,
    "startedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "endedAt" TIMESTAMP(3),

    CONSTRAINT "Allocation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Endpoint" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "resources" JSONB NOT NULL,
    "minReplicas" INTEGER NOT NULL DEFAULT 0,
    "maxReplicas" INTEGER NOT NULL DEFAULT 1,
    "targetConcurrency" INTEGER NOT NULL DEFAULT 100,
    "scaleToZeroAfterSeconds" INTEGER NOT NULL DEFAULT 300,
    "desiredReplicas" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Endpoint_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Event" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT,
    "jobId" TEXT,
    "nodeId" TEXT,
    "type" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "data" JSONB NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Event_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Incident" (
    "id" TEXT NOT NULL,
    "nodeId" TEXT,
    "gpuId" TEXT,
    "kind" TEXT NOT NULL,
    "severity" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'open',
    "timeline" JSONB NOT NULL DEFAULT '[]',
    "detectedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolvedAt" TIMESTAMP(3),

    CONSTRAINT "Incident_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AuditLog" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT,
    "actor" TEXT NOT NULL,
    "apiKeyId" TEXT,
    "userId" TEXT,
    "source" TEXT,
    "action" TEXT NOT NULL,
    "target" TEXT,
    "data" JSONB NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AuditLog_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Tenant_slug_key" ON "Tenant"("slug");

-- CreateIndex
CREATE INDEX "Team_tenantId_idx" ON "Team"("tenantId");

-- CreateIndex
CREATE UNIQUE INDEX "Team_tenantId_slug_key" ON "Team"("tenantId", "slug");

-- CreateIndex
CREATE UNIQUE INDEX "User_email_key" ON "User"("email");

-- CreateIndex
CREATE INDEX "User_tenantId_idx" ON "User"("tenantId");

-- CreateIndex
CREATE UNIQUE INDEX "ApiKey_prefix_key" ON "ApiKey"("prefix");

-- CreateIndex
CREATE UNIQUE INDEX "ApiKey_hash_key" ON "ApiKey"("hash");

-- CreateIndex
CREATE INDEX "ApiKey_tenantId_idx" ON "ApiKey"("tenantId");

-- CreateIndex
CREATE UNIQUE INDEX "Quota_teamId_gpuModel_key" ON "Quota"("teamId", "gpuModel");

-- CreateIndex
CREATE UNIQUE INDEX "Spine_name_key" ON "Spine"("name");

-- CreateIndex
CREATE UNIQUE INDEX "Leaf_name_key" ON "Leaf"("name");

-- CreateIndex
CREATE UNIQUE INDEX "Node_name_key" ON "Node"("name");

-- CreateIndex
CREATE INDEX "Node_leafId_idx" ON "Node"("leafId");

-- CreateIndex
CREATE INDEX "Gpu_model_idx" ON "Gpu"("model");

-- CreateIndex
CREATE UNIQUE INDEX "Gpu_nodeId_index_key" ON "Gpu"("nodeId", "index");

-- CreateIndex
CREATE UNIQUE INDEX "GpuInstance_gpuId_start_key" ON "GpuInstance"("gpuId", "start");

-- CreateIndex
CREATE INDEX "Job_tenantId_state_idx" ON "Job"("tenantId", "state");

-- CreateIndex
CREATE INDEX "Job_state_priority_createdAt_idx" ON "Job"("state", "priority", "createdAt");

-- CreateIndex
CREATE INDEX "Job_teamId_idx" ON "Job"("teamId");

-- CreateIndex
CREATE UNIQUE INDEX "Job_tenantId_idempotencyKey_key" ON "Job"("tenantId", "idempotencyKey");

-- CreateIndex
CREATE UNIQUE INDEX "Allocation_activeSlot_key" ON "Allocation"("activeSlot");

-- CreateIndex
CREATE INDEX "Allocation_jobId_idx" ON "Allocation"("jobId");

-- CreateIndex
CREATE INDEX "Allocation_gpuId_endedAt_idx" ON "Allocation"("gpuId", "endedAt");

-- CreateIndex
CREATE INDEX "Allocation_nodeId_endedAt_idx" ON "Allocation"("nodeId", "endedAt");

-- CreateIndex
CREATE INDEX "Allocation_tenantId_teamId_idx" ON "Allocation"("tenantId", "teamId");

-- CreateIndex
CREATE UNIQUE INDEX "Endpoint_tenantId_name_key" ON "Endpoint"("tenantId", "name");

-- CreateIndex
CREATE INDEX "Event_tenantId_createdAt_idx" ON "Event"("tenantId", "createdAt");

-- CreateIndex
CREATE INDEX "Event_jobId_createdAt_idx" ON "Event"("jobId", "createdAt");

-- CreateIndex
CREATE INDEX "AuditLog_tenantId_createdAt_idx" ON "AuditLog"("tenantId", "createdAt");

-- AddForeignKey
ALTER TABLE "Team" ADD CONSTRAINT "Team_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "User" ADD CONSTRAINT "User_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "User" ADD CONSTRAINT "User_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApiKey" ADD CONSTRAINT "ApiKey_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApiKey" ADD CONSTRAINT "ApiKey_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApiKey" ADD CONSTRAINT "ApiKey_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Quota" ADD CONSTRAINT "Quota_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Leaf" ADD CONSTRAINT "Leaf_spineId_fkey" FOREIGN KEY ("spineId") REFERENCES "Spine"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Node" ADD CONSTRAINT "Node_leafId_fkey" FOREIGN KEY ("leafId") REFERENCES "Leaf"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Gpu" ADD CONSTRAINT "Gpu_nodeId_fkey" FOREIGN KEY ("nodeId") REFERENCES "Node"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "GpuInstance" ADD CONSTRAINT "GpuInstance_gpuId_fkey" FOREIGN KEY ("gpuId") REFERENCES "Gpu"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Job" ADD CONSTRAINT "Job_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Job" ADD CONSTRAINT "Job_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Allocation" ADD CONSTRAINT "Allocation_jobId_fkey" FOREIGN KEY ("jobId") REFERENCES "Job"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Allocation" ADD CONSTRAINT "Allocation_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "Endpoint"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Allocation" ADD CONSTRAINT "Allocation_nodeId_fkey" FOREIGN KEY ("nodeId") REFERENCES "Node"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Allocation" ADD CONSTRAINT "Allocation_gpuId_fkey" FOREIGN KEY ("gpuId") REFERENCES "Gpu"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Endpoint" ADD CONSTRAINT "Endpoint_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Endpoint" ADD CONSTRAINT "Endpoint_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Event" ADD CONSTRAINT "Event_jobId_fkey" FOREIGN KEY ("jobId") REFERENCES "Job"("id") ON DELETE SET NULL ON UPDATE CASCADE;

