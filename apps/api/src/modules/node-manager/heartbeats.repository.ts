import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../common/prisma.service';

/** The last heartbeat of each node, recorded by the health monitor (one statement for all nodes). */
@Injectable()
export class HeartbeatsRepository {
  constructor(private readonly prisma: PrismaService) {}

  private get db() {
    return this.prisma.client;
  }

  async touchHeartbeats(names: string[], at: Date): Promise<void> {
    if (!names.length) return;
    await this.db.node.updateMany({ where: { name: { in: names } }, data: { heartbeatAt: at } });
  }
}
