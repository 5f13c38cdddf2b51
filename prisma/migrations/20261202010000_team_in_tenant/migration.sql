-- A team-owned row team always belongs to the row tenant: the database refuses a job,
-- endpoint, allocation, schedule, API key or user whose (teamId, tenantId) is not a team of that
-- tenant, whatever the code above it does. Rows without a team (MATCH SIMPLE: a NULL teamId) are
-- not checked. The Prisma schema knows the unique key, and these foreign keys live here only.
CREATE UNIQUE INDEX "Team_id_tenantId_key" ON "Team"("id", "tenantId");

ALTER TABLE "Job" ADD CONSTRAINT "Job_team_in_tenant_fkey" FOREIGN KEY ("teamId", "tenantId") REFERENCES "Team"("id", "tenantId") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "Endpoint" ADD CONSTRAINT "Endpoint_team_in_tenant_fkey" FOREIGN KEY ("teamId", "tenantId") REFERENCES "Team"("id", "tenantId") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "Allocation" ADD CONSTRAINT "Allocation_team_in_tenant_fkey" FOREIGN KEY ("teamId", "tenantId") REFERENCES "Team"("id", "tenantId") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "SuspendSchedule" ADD CONSTRAINT "SuspendSchedule_team_in_tenant_fkey" FOREIGN KEY ("teamId", "tenantId") REFERENCES "Team"("id", "tenantId") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "ApiKey" ADD CONSTRAINT "ApiKey_team_in_tenant_fkey" FOREIGN KEY ("teamId", "tenantId") REFERENCES "Team"("id", "tenantId") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "User" ADD CONSTRAINT "User_team_in_tenant_fkey" FOREIGN KEY ("teamId", "tenantId") REFERENCES "Team"("id", "tenantId") ON DELETE RESTRICT ON UPDATE CASCADE;
