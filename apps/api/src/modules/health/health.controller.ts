import { Controller, Get, HttpCode } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Public } from '../../common/auth.decorators';
import { Route } from '../../common/openapi.decorators';
import { HealthService } from './health.service';

@ApiTags('health')
@Controller()
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get('healthz')
  @Public()
  @Route({ summary: 'Liveness: the process answers', public: true, errors: [] })
  healthz() {
    return { status: 'ok' };
  }

  @Get('readyz')
  @Public()
  @HttpCode(200)
  @Route({ summary: 'Readiness: Postgres and Redis answer', public: true, errors: [503] })
  readyz() {
    return this.health.ready();
  }
}
