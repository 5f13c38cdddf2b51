-- Burn-in under load before a repaired GPU or node goes back into service (failover).
ALTER TABLE "Incident" ADD COLUMN "burnInFailures" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "Incident" ADD COLUMN "burnInJobId" TEXT;
ALTER TABLE "Incident" ADD COLUMN "burnInStartedAt" TIMESTAMP(3);
