import { Controller, Get, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../auth/auth.decorators';
import { MetricsService } from './metrics.service';

/** Prometheus scrape target (unauthenticated, like /healthz; expose it only inside the cluster). */
@ApiExcludeController()
@Controller()
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Public()
  @Get('metrics')
  async scrape(@Res() res: Response): Promise<void> {
    const text = await this.metrics.text();
    res.setHeader('content-type', this.metrics.contentType());
    res.send(text);
  }
}
