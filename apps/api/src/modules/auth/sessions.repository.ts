import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../common/prisma.service';

/**
 * Console sessions. Looked up by the hash of the cookie's token (system-wide, like API keys);
 * the user's tenant comes from the user row.
 */
@Injectable()
export class SessionsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * The accounts with this e-mail (unique per tenant, so one per tenant at most), oldest
   * first, at most `take`; with `tenantSlug`, only that tenant's.
   */
  findUsersByEmail(email: string, opts: { tenantSlug?: string; take: number }) {
    return this.prisma.client.user.findMany({
      where: { email, ...(opts.tenantSlug ? { tenant: { slug: opts.tenantSlug } } : {}) },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: opts.take,
    });
  }

  /** A session of a user (password sign-in) or of an API key (`apiKeyHash`: the console's key sign-in). */
  create(data: { userId?: string; apiKeyHash?: string; tokenHash: string; csrfToken: string; source: string | null; expiresAt: Date }) {
    return this.prisma.client.session.create({ data });
  }

  findByTokenHash(tokenHash: string) {
    return this.prisma.client.session.findUnique({ where: { tokenHash }, include: { user: true } });
  }

  /** Revocation and expiry of a session, by id (for re-checking a credential in use). */
  validity(id: string) {
    return this.prisma.client.session.findUnique({ where: { id }, select: { revokedAt: true, expiresAt: true } });
  }

  async touch(id: string, at: Date): Promise<void> {
    await this.prisma.client.session.update({ where: { id }, data: { lastUsedAt: at } });
  }

  async revoke(id: string, at: Date): Promise<void> {
    await this.prisma.client.session.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: at } });
  }
}
