-- What an audited change changed: per field, its value before and after (null when nothing changed).
ALTER TABLE "AuditLog" ADD COLUMN "changes" JSONB;
