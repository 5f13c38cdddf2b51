-- DropForeignKey
ALTER TABLE "Session" DROP CONSTRAINT "Session_userId_fkey";

-- AlterTable
ALTER TABLE "Session" ADD COLUMN     "apiKeyHash" TEXT,
ALTER COLUMN "userId" DROP NOT NULL;

-- AlterTable
ALTER TABLE "ApiKey" ADD COLUMN     "owner" TEXT;

-- AlterTable
ALTER TABLE "Job" ADD COLUMN     "idempotencyBodyHash" TEXT;

-- CreateIndex
CREATE INDEX "ApiKey_owner_idx" ON "ApiKey"("owner");

-- AddForeignKey
ALTER TABLE "Session" ADD CONSTRAINT "Session_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE;


-- Backfill: every existing key is owned by its user, or by itself.
UPDATE "ApiKey" SET "owner" = CASE WHEN "userId" IS NOT NULL THEN 'user:' || "userId" ELSE 'key:' || "id" END WHERE "owner" IS NULL;
