-- Bare-metal leases (docs/bare-metal.md): whole nodes a team holds, out of the container and VM pool.
-- CreateEnum
CREATE TYPE "BareMetalLeaseState" AS ENUM ('pending', 'provisioning', 'deployed', 'suspending', 'suspended', 'resuming', 'releasing', 'released');

-- CreateEnum
CREATE TYPE "BareMetalNodeState" AS ENUM ('provisioning', 'deployed', 'powering_off', 'powered_off', 'powering_on', 'deprovisioning');

-- AlterTable
ALTER TABLE "Node" ADD COLUMN     "bareMetalLeaseId" TEXT,
ADD COLUMN     "bareMetalSince" TIMESTAMP(3),
ADD COLUMN     "bareMetalState" "BareMetalNodeState";

-- AlterTable
ALTER TABLE "Allocation" ADD COLUMN     "bareMetalLeaseId" TEXT;

-- CreateTable
CREATE TABLE "BareMetalLease" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "teamId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "gpuModel" TEXT NOT NULL,
    "count" INTEGER NOT NULL,
    "image" TEXT NOT NULL,
    "sameLeaf" BOOLEAN NOT NULL DEFAULT false,
    "state" "BareMetalLeaseState" NOT NULL DEFAULT 'pending',
    "stateReason" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deployedAt" TIMESTAMP(3),
    "releasedAt" TIMESTAMP(3),

    CONSTRAINT "BareMetalLease_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "BareMetalLease_tenantId_teamId_idx" ON "BareMetalLease"("tenantId", "teamId");

-- CreateIndex
CREATE INDEX "BareMetalLease_state_idx" ON "BareMetalLease"("state");

-- CreateIndex
CREATE INDEX "Node_bareMetalLeaseId_idx" ON "Node"("bareMetalLeaseId");

-- AddForeignKey
ALTER TABLE "Node" ADD CONSTRAINT "Node_bareMetalLeaseId_fkey" FOREIGN KEY ("bareMetalLeaseId") REFERENCES "BareMetalLease"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Allocation" ADD CONSTRAINT "Allocation_bareMetalLeaseId_fkey" FOREIGN KEY ("bareMetalLeaseId") REFERENCES "BareMetalLease"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "BareMetalLease" ADD CONSTRAINT "BareMetalLease_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "BareMetalLease" ADD CONSTRAINT "BareMetalLease_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE RESTRICT ON UPDATE CASCADE;


-- A lease's team belongs to its tenant (as for every team-owned row: migration team_in_tenant).
ALTER TABLE "BareMetalLease" ADD CONSTRAINT "BareMetalLease_team_in_tenant_fkey" FOREIGN KEY ("teamId", "tenantId") REFERENCES "Team"("id", "tenantId") ON DELETE RESTRICT ON UPDATE CASCADE;
