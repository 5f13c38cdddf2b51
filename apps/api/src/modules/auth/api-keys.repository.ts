import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../common/prisma.service';

/** API key lookups for authentication (by hash; the secret itself is never stored). */
@Injectable()
export class ApiKeysRepository {
  constructor(private readonly prisma: PrismaService) {}

  findByHash(hash: string) {
    return this.prisma.client.apiKey.findUnique({ where: { hash } });
  }

  async touch(id: string, at: Date): Promise<void> {
    await this.prisma.client.apiKey.update({ where: { id }, data: { lastUsedAt: at } });
  }
}
