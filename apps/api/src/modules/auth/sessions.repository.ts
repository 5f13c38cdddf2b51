import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../common/prisma.service';

/**
 * Console sessions. Looked up by the hash of the cookie's token (system-wide, like API keys);
 * the user's tenant comes from the user row.
 */
@Injectable()
export class SessionsRepository {
  constructor(private readonly prisma: PrismaService) {}

  findUserByEmail(email: string) {
    return this.prisma.client.user.findUnique({ where: { email } });
  }

  create(data: { userId: string; tokenHash: string; csrfToken: string; source: string | null; expiresAt: Date }) {
    return this.prisma.client.session.create({ data });
  }

  findByTokenHash(tokenHash: string) {
    return this.prisma.client.session.findUnique({ where: { tokenHash }, include: { user: true } });
  }

  async touch(id: string, at: Date): Promise<void> {
    await this.prisma.client.session.update({ where: { id }, data: { lastUsedAt: at } });
  }

  async revoke(id: string, at: Date): Promise<void> {
    await this.prisma.client.session.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: at } });
  }
}
