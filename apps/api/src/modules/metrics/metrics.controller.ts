import { Controller, Get, Res, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../../common/auth.decorators';
import { MetricsGuard } from './metrics.guard';
import { MetricsService } from './metrics.service';

/**
 * Prometheus scrape target: `Authorization: Bearer <GANTRY_METRICS_TOKEN>` (Prometheus:
 * `authorization.credentials_file`) or a platform admin's API key. Not behind the API's own
 * guard (no session cookie, no rate limit, no scopes): MetricsGuard decides.
 */
@ApiExcludeController()
@Controller()
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Public()
  @UseGuards(MetricsGuard)
  @Get('metrics')
  async scrape(@Res() res: Response): Promise<void> {
    const text = await this.metrics.text();
    res.setHeader('content-type', this.metrics.contentType());
    res.send(text);
  }
}
