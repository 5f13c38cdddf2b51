-- AlterTable
ALTER TABLE "Endpoint" ADD COLUMN     "deletedAt" TIMESTAMP(3),
ADD COLUMN     "lastRequestAt" TIMESTAMP(3),
ADD COLUMN     "manualReplicas" INTEGER,
ADD COLUMN     "manualUntil" TIMESTAMP(3),
ADD COLUMN     "version" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "warmPool" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "EndpointReplica" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "endpointId" TEXT NOT NULL,
    "replica" INTEGER NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'starting',
    "serving" BOOLEAN NOT NULL DEFAULT true,
    "activeKey" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "readyAt" TIMESTAMP(3),
    "endedAt" TIMESTAMP(3),

    CONSTRAINT "EndpointReplica_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ColdStart" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "endpointId" TEXT NOT NULL,
    "startedAt" TIMESTAMP(3) NOT NULL,
    "readyAt" TIMESTAMP(3) NOT NULL,
    "durationMs" INTEGER NOT NULL,
    "warm" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "ColdStart_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "EndpointReplica_activeKey_key" ON "EndpointReplica"("activeKey");

-- CreateIndex
CREATE INDEX "EndpointReplica_endpointId_endedAt_idx" ON "EndpointReplica"("endpointId", "endedAt");

-- CreateIndex
CREATE INDEX "ColdStart_endpointId_startedAt_idx" ON "ColdStart"("endpointId", "startedAt");

-- CreateIndex
CREATE INDEX "Endpoint_tenantId_idx" ON "Endpoint"("tenantId");

-- AddForeignKey
ALTER TABLE "EndpointReplica" ADD CONSTRAINT "EndpointReplica_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "Endpoint"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ColdStart" ADD CONSTRAINT "ColdStart_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "Endpoint"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

