import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { apiKeyPrefix } from '@gantry/db';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { DomainError } from '../../common/errors';
import { safeEqual } from '../../common/safe-equal';
import { AuthService } from '../auth/auth.service';

const HOW = 'send "Authorization: Bearer <GANTRY_METRICS_TOKEN>" or a platform admin\'s API key';

/**
 * /metrics: `Authorization: Bearer <GANTRY_METRICS_TOKEN>` (compared in constant time) or a
 * platform admin's API key. Anything else is a 401 (no or wrong credentials) or a 403 (a valid
 * key that is not a platform admin's), in the error envelope. Without GANTRY_METRICS_TOKEN only
 * platform-admin keys scrape.
 */
@Injectable()
export class MetricsGuard implements CanActivate {
  private readonly token?: string;

  constructor(
    private readonly auth: AuthService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.token = config.metrics.token;
  }

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const header = ctx.switchToHttp().getRequest<Request>().headers['authorization'];
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
    if (!bearer) throw new DomainError('unauthenticated', `/metrics needs credentials: ${HOW}`);
    if (this.token && safeEqual(bearer, this.token)) return true;
    if (!apiKeyPrefix(bearer)) throw new DomainError('unauthenticated', `invalid metrics token: ${HOW}`);
    const p = await this.auth.authenticate(header); // 401 for an unknown, revoked or expired key
    if (p.role !== 'platform-admin' || p.tenantId !== null) {
      throw new DomainError('forbidden', `this key may not read /metrics: ${HOW}`);
    }
    return true;
  }
}
