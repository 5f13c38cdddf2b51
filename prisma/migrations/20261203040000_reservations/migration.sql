-- CreateTable
CREATE TABLE "Reservation" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "gpuModel" TEXT NOT NULL,
    "gpus" INTEGER,
    "nodes" INTEGER,
    "startsAt" TIMESTAMP(3) NOT NULL,
    "endsAt" TIMESTAMP(3) NOT NULL,
    "cron" TEXT,
    "timeZone" TEXT,
    "durationMinutes" INTEGER,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Reservation_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Reservation_tenantId_teamId_idx" ON "Reservation"("tenantId", "teamId");

-- CreateIndex
CREATE INDEX "Reservation_gpuModel_endsAt_idx" ON "Reservation"("gpuModel", "endsAt");

-- AddForeignKey
ALTER TABLE "Reservation" ADD CONSTRAINT "Reservation_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Reservation" ADD CONSTRAINT "Reservation_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- The reservation's team belongs to the row's tenant (as migration team_in_tenant does for team-owned rows).
ALTER TABLE "Reservation" ADD CONSTRAINT "Reservation_team_in_tenant_fkey" FOREIGN KEY ("teamId", "tenantId") REFERENCES "Team"("id", "tenantId") ON DELETE CASCADE ON UPDATE CASCADE;

-- Exactly one of gpus and nodes (a positive count), a window that ends after it starts, a whole recurrence or none.
ALTER TABLE "Reservation" ADD CONSTRAINT "Reservation_size_check" CHECK (("gpus" IS NULL) <> ("nodes" IS NULL) AND COALESCE("gpus", "nodes") > 0);
ALTER TABLE "Reservation" ADD CONSTRAINT "Reservation_window_check" CHECK ("endsAt" > "startsAt");
ALTER TABLE "Reservation" ADD CONSTRAINT "Reservation_recurrence_check" CHECK (("cron" IS NULL AND "timeZone" IS NULL AND "durationMinutes" IS NULL) OR ("cron" IS NOT NULL AND "timeZone" IS NOT NULL AND "durationMinutes" > 0));
