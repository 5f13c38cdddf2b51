import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import express, { type NextFunction, type Request, type Response } from 'express';
import { DomainError } from './common/errors';
import { toEnvelope } from './common/error.filter';

/** Express-level setup: JSON body parsing with enveloped errors, docs. */
export function configureHttp(app: INestApplication): OpenAPIObject {
  const http = app.getHttpAdapter().getInstance() as express.Express;
  http.disable('x-powered-by');
  http.set('query parser', 'simple');
  http.use(express.json({ limit: '1mb', type: ['application/json', 'application/*+json'] }));
  http.use((err: { type?: string; status?: number; message?: string }, _req: Request, res: Response, next: NextFunction) => {
    if (!err) return next();
    const e =
      err.type === 'entity.parse.failed'
        ? new DomainError('invalid_json', 'request body is not valid JSON')
        : err.type === 'entity.too.large'
          ? new DomainError('payload_too_large', 'request body is larger than 1 MB')
          : err.status && err.status < 500
            ? new DomainError('validation_failed', err.message ?? 'bad request')
            : err;
    const { status, body } = toEnvelope(e);
    res.status(status).json(body);
  });
  const document = buildOpenApi(app);
  http.get('/openapi.json', (_req: Request, res: Response) => {
    res.json(document);
  });
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: '/docs-json' });
  return document;
}

export function buildOpenApi(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Gantry API')
    .setDescription('Multi-tenant GPU orchestration: jobs, quotas, nodes, GPUs and MIG slices. Errors: { error: { code, message, details } }.')
    .setVersion('1')
    .addApiKey({ type: 'http', scheme: 'bearer', bearerFormat: 'gk_<prefix>_<secret>' }, 'apiKey')
    .build();
  return SwaggerModule.createDocument(app, config);
}
