-- Bare-metal lease events: each lease and node step is an event on the lease (and on the node).
ALTER TABLE "Event" ADD COLUMN "bareMetalLeaseId" TEXT;

-- CreateIndex
CREATE INDEX "Event_bareMetalLeaseId_createdAt_idx" ON "Event"("bareMetalLeaseId", "createdAt");

-- CreateIndex
CREATE INDEX "Event_nodeId_createdAt_idx" ON "Event"("nodeId", "createdAt");

-- AddForeignKey
ALTER TABLE "Event" ADD CONSTRAINT "Event_bareMetalLeaseId_fkey" FOREIGN KEY ("bareMetalLeaseId") REFERENCES "BareMetalLease"("id") ON DELETE SET NULL ON UPDATE CASCADE;
