import { Prisma, type PrismaClient, type Role } from '../generated/client';
import { Algorithm, hash } from '@node-rs/argon2';
import { newApiKey } from './api-keys';

/** Factories shared by the demo seed and the tests (they build the same rows the API builds). */

/** A tenant; `gpuTotal` bounds its teams' quotas (omitted: unbounded, as the tests and demo set it). */
export async function createTenant(db: PrismaClient, data: { name: string; slug: string; gpuTotal?: number }) {
  const { gpuTotal, ...rest } = data;
  return db.tenant.upsert({
    where: { slug: data.slug },
    update: {},
    create: { ...rest, ...(gpuTotal !== undefined ? { gpuTotal: new Prisma.Decimal(gpuTotal) } : {}) },
  });
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

export async function createUser(db: PrismaClient, data: { email: string; name: string; role: Role; tenantId?: string; teamId?: string; password?: string }) {
  const { password, ...rest } = data;
  // argon2id, the parameters the API uses (OWASP minimum: 19 MiB, 2 passes).
  const passwordHash = password ? await hash(password, { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 }) : undefined;
  // An e-mail is unique per tenant (not across tenants): the same address in another tenant is another user.
  const existing = await db.user.findFirst({ where: { tenantId: data.tenantId ?? null, email: data.email } });
  const user = existing ?? (await db.user.create({ data: { ...rest, passwordHash } }));
  if (passwordHash && !user.passwordHash) return db.user.update({ where: { id: user.id }, data: { passwordHash } });
  return user;
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
