import { Injectable } from '@nestjs/common';
import { DomainError } from '../../common/errors';
import { RedisService } from '../../common/redis.service';
import { HealthRepository } from './health.repository';

@Injectable()
export class HealthService {
  constructor(
    private readonly db: HealthRepository,
    private readonly redis: RedisService,
  ) {}

  async ready(): Promise<{ status: 'ready'; postgres: 'ok'; redis: 'ok' }> {
    const [pg, rd] = await Promise.allSettled([this.db.ping(), withTimeout(this.redis.client.ping(), 2000)]);
    const down = [pg.status === 'rejected' ? 'postgres' : null, rd.status === 'rejected' ? 'redis' : null].filter(Boolean);
    if (down.length) throw new DomainError('unavailable', `not ready: ${down.join(' and ')} unreachable`);
    return { status: 'ready', postgres: 'ok', redis: 'ok' };
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref())]);
}
