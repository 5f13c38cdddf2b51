-- Job logs in chunks: one row per replica and collection round instead of one per line (a row per
-- line cost Postgres an index entry, two foreign-key checks and a tuple for every line a job printed).
-- JobLogLine keeps the lines stored before, and Gantry's notes (seq -1).
CREATE TABLE "JobLogChunk" (
    "id" TEXT NOT NULL,
    "jobId" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "replica" INTEGER NOT NULL,
    "firstSeq" BIGINT NOT NULL,
    "lastSeq" BIGINT NOT NULL,
    "firstAt" TIMESTAMP(3) NOT NULL,
    "lastAt" TIMESTAMP(3) NOT NULL,
    "lines" INTEGER NOT NULL,
    "body" JSONB NOT NULL,

    CONSTRAINT "JobLogChunk_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "JobLogChunk_jobId_replica_firstSeq_key" ON "JobLogChunk"("jobId", "replica", "firstSeq");
CREATE INDEX "JobLogChunk_jobId_lastAt_idx" ON "JobLogChunk"("jobId", "lastAt");

ALTER TABLE "JobLogChunk" ADD CONSTRAINT "JobLogChunk_jobId_fkey" FOREIGN KEY ("jobId") REFERENCES "Job"("id") ON DELETE CASCADE ON UPDATE CASCADE;
-- The chunk's team belongs to its tenant (as for JobLogLine).
ALTER TABLE "JobLogChunk" ADD CONSTRAINT "JobLogChunk_team_in_tenant_fkey" FOREIGN KEY ("teamId", "tenantId") REFERENCES "Team"("id", "tenantId") ON DELETE RESTRICT ON UPDATE CASCADE;
