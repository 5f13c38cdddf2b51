import { Prisma, type PrismaClient, type Role } from '../generated/client';
import { newApiKey } from './api-keys';

/** Factories shared by the demo seed and the tests (they build the same rows the API builds). */

export async function createTenant(db: PrismaClient, data: { name: string; slug: string }) {
  return db.tenant.upsert({ where: { slug: data.slug }, update: {}, create: data });
}

export async function createTeam(
  db: PrismaClient,
  tenantId: string,
  data: { name: string; slug: string; quota?: { gpuModel?: string; guaranteed: number; limit: number } },
) {
  const team = await db.team.upsert({
    where: { tenantId_slug: { tenantId, slug: data.slug } },
    update: {},
    create: { tenantId, name: data.name, slug: data.slug },
  });
  if (data.quota) {
    const gpuModel = data.quota.gpuModel ?? '*';
    await db.quota.upsert({
      where: { teamId_gpuModel: { teamId: team.id, gpuModel } },
      update: {},
      create: {
        teamId: team.id,
        gpuModel,
        guaranteed: new Prisma.Decimal(data.quota.guaranteed),
        limit: new Prisma.Decimal(data.quota.limit),
      },
    });
  }
  return team;
}

export async function createUser(
  db: PrismaClient,
  data: { email: string; name: string; role: Role; tenantId?: string; teamId?: string },
) {
  return db.user.upsert({ where: { email: data.email }, update: {}, create: data });
}

/** Creates an API key and returns the full secret (shown once). */
export async function createApiKey(
  db: PrismaClient,
  data: { name: string; role: Role; scopes: string[]; tenantId?: string; teamId?: string; userId?: string; expiresAt?: Date },
) {
  const k = newApiKey();
  const row = await db.apiKey.create({ data: { ...data, prefix: k.prefix, hash: k.hash } });
  return { id: row.id, prefix: k.prefix, key: k.key };
}
