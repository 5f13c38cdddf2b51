-- Power management (docs/power.md): node power states and the spans nodes were off.
CREATE TYPE "NodePowerState" AS ENUM ('on', 'powering-down', 'off', 'powering-up');

ALTER TABLE "Node" ADD COLUMN "powerState" "NodePowerState" NOT NULL DEFAULT 'on',
ADD COLUMN "powerChangedAt" TIMESTAMP(3);

CREATE TABLE "NodePowerOff" (
    "id" TEXT NOT NULL,
    "nodeId" TEXT NOT NULL,
    "startedAt" TIMESTAMP(3) NOT NULL,
    "endedAt" TIMESTAMP(3),
    "savedW" DOUBLE PRECISION NOT NULL,

    CONSTRAINT "NodePowerOff_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "NodePowerOff_nodeId_endedAt_idx" ON "NodePowerOff"("nodeId", "endedAt");
CREATE INDEX "NodePowerOff_startedAt_idx" ON "NodePowerOff"("startedAt");

ALTER TABLE "NodePowerOff" ADD CONSTRAINT "NodePowerOff_nodeId_fkey" FOREIGN KEY ("nodeId") REFERENCES "Node"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
