import type { Team, Tenant } from '@gantry/contracts';

export const presentTenant = (t: { id: string; name: string; slug: string; gpuTotal: { toString(): string } | null; createdAt: Date }): Tenant => ({
  id: t.id,
  name: t.name,
  slug: t.slug,
  gpuTotal: t.gpuTotal == null ? null : Number(t.gpuTotal.toString()),
  createdAt: t.createdAt.toISOString(),
});

export const presentTeam = (t: { id: string; tenantId: string; name: string; slug: string; createdAt: Date }): Team => ({
  id: t.id,
  tenantId: t.tenantId,
  name: t.name,
  slug: t.slug,
  createdAt: t.createdAt.toISOString(),
});
