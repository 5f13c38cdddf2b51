import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import express, { type NextFunction, type Request, type Response } from 'express';
import { APP_CONFIG, type AppConfig } from './config/config';
import { DomainError } from './common/errors';
import { toEnvelope } from './common/error.filter';
import { checkJsonShape, checkPath } from './common/json-shape';
import { securityHeaders, securityHeadersMiddleware } from './common/security-headers';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const JSON_TYPES = ['application/json', 'application/*+json'];

/** Express-level setup: security headers, JSON body parsing with enveloped errors, docs. */
export function configureHttp(app: INestApplication): OpenAPIObject {
  const http = app.getHttpAdapter().getInstance() as express.Express;
  const { hsts } = app.get<AppConfig>(APP_CONFIG, { strict: false });
  http.disable('x-powered-by');
  http.set('query parser', 'simple');
  // First, so that every answer has them: JSON, errors, 404s, the docs (common/security-headers.ts).
  http.use(securityHeadersMiddleware({ hsts }));
  http.use(express.json({ limit: '1mb', type: JSON_TYPES }));
  http.use((req: Request, _res: Response, next: NextFunction) => {
    // A body in another media type is refused (415) rather than read as "no body";
    // a JSON body too deep or with unstorable strings is refused (400) before any interceptor sees it.
    if (BODY_METHODS.has(req.method) && hasBody(req) && !req.is(JSON_TYPES)) {
      return next(
        new DomainError(
          'unsupported_media_type',
          `request bodies must be application/json (got ${String(req.headers['content-type'] ?? 'no content type').slice(0, 100)})`,
        ),
      );
    }
    try {
      checkPath(req.path);
      checkJsonShape(req.query, '(query)');
      if (req.body !== undefined) checkJsonShape(req.body);
    } catch (e) {
      return next(e);
    }
    next();
  });
  http.use((err: { type?: string; status?: number; message?: string }, _req: Request, res: Response, next: NextFunction) => {
    if (!err) return next();
    const e =
      err instanceof DomainError
        ? err
        : err.type === 'entity.parse.failed'
          ? new DomainError('invalid_json', 'request body is not valid JSON')
          : err.type === 'entity.too.large'
            ? new DomainError('payload_too_large', 'request body is larger than 1 MB')
            : err.status === 415
              ? new DomainError('unsupported_media_type', err.message ?? 'unsupported media type')
              : err.status && err.status < 500
                ? new DomainError('validation_failed', err.message ?? 'bad request')
                : err;
    const { status, body } = toEnvelope(e);
    res.status(status).json(body);
  });
  // Requests Node refuses before Express sees them (headers over 16 KB, broken HTTP): the envelope too.
  (app.getHttpServer() as Server).on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    const { status, body } = toEnvelope(
      err.code === 'HPE_HEADER_OVERFLOW'
        ? new DomainError('headers_too_large', 'request headers (with the URL) are larger than 16 KB')
        : new DomainError('validation_failed', 'malformed HTTP request'),
    );
    const text = JSON.stringify(body);
    const headers = Object.entries(securityHeaders('', { hsts }))
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n${headers}Connection: close\r\n\r\n${text}`,
    );
  });
  const document = buildOpenApi(app);
  http.get('/openapi.json', (_req: Request, res: Response) => {
    res.json(document);
  });
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: '/docs-json' });
  return document;
}

/** True when the request carries a body (a length above 0, or a chunked one). */
function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
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
