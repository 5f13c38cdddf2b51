-- What an audited change changed: per field, its value before and after (null when nothing changed).
ALTER TABLE "AuditLog" ADD COLUMN "changes" JSONB;

-- Allocated but idle: GPU-seconds held on GPUs whose SM use stayed under the idle threshold.
ALTER TABLE "UsageRollup" ADD COLUMN "idleSeconds" DOUBLE PRECISION NOT NULL DEFAULT 0;
