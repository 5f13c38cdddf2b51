import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../common/prisma.service';
import { checkInvariants, type InvariantReport } from '../../invariants';

/** The invariant checker over this process's database connection. */
@Injectable()
export class IntegrityRepository {
  constructor(private readonly prisma: PrismaService) {}

  check(settled: boolean): Promise<InvariantReport> {
    return checkInvariants(this.prisma.client, { settled });
  }
}
