-- CreateTable
CREATE TABLE "DemoHistory" (
    "id" TEXT NOT NULL,
    "fromAt" TIMESTAMP(3) NOT NULL,
    "toAt" TIMESTAMP(3) NOT NULL,
    "jobs" INTEGER NOT NULL,
    "allocations" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "DemoHistory_pkey" PRIMARY KEY ("id")
);
