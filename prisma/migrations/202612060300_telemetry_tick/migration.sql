-- Telemetry ticks in their own table: the idempotency marker of a tick and the heatmap's newest
-- tick time, which the raw-sample insert carried while a tick wrote a sample for every GPU
-- (80,000 rows every 15 s at 10,000 nodes). Raw samples are now written only when a GPU's sample
-- changed. The ticks already written are carried over from their samples.
CREATE TABLE "TelemetryTick" (
    "at" TIMESTAMP(3) NOT NULL,
    "gpus" INTEGER NOT NULL,

    CONSTRAINT "TelemetryTick_pkey" PRIMARY KEY ("at")
);

INSERT INTO "TelemetryTick" ("at", "gpus") SELECT "at", count(*)::int FROM "GpuSample" GROUP BY "at";
