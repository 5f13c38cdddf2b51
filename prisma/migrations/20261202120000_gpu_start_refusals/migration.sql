-- AlterTable
ALTER TABLE "Gpu" ADD COLUMN     "startRefusals" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "startRefusedUntil" TIMESTAMP(3);

