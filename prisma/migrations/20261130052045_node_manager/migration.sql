-- AlterTable
ALTER TABLE "Node" ADD COLUMN     "personaTarget" "Persona",
ADD COLUMN     "personaChangedAt" TIMESTAMP(3),
ADD COLUMN     "transitionStartedAt" TIMESTAMP(3),
ADD COLUMN     "transitionEtaAt" TIMESTAMP(3);

-- AlterTable
ALTER TABLE "Gpu" ADD COLUMN     "migTarget" JSONB,
ADD COLUMN     "migRequestedAt" TIMESTAMP(3),
ADD COLUMN     "migChangedAt" TIMESTAMP(3);

-- AlterTable
ALTER TABLE "Incident" ADD COLUMN     "xid" INTEGER,
ADD COLUMN     "scope" TEXT NOT NULL DEFAULT 'gpu',
ADD COLUMN     "remediation" TEXT NOT NULL DEFAULT 'none',
ADD COLUMN     "summary" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "jobIds" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "tenantIds" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "mitigatedAt" TIMESTAMP(3),
ADD COLUMN     "attempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "openKey" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "Incident_openKey_key" ON "Incident"("openKey");

-- CreateIndex
CREATE INDEX "Incident_state_detectedAt_idx" ON "Incident"("state", "detectedAt");

-- CreateIndex
CREATE INDEX "Incident_detectedAt_idx" ON "Incident"("detectedAt");
