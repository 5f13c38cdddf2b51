import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { DomainError, ErrorCode, HTTP_STATUS } from './errors';
import { isDatabaseUnavailable } from './prisma-errors';

const STATUS_CODE: Record<number, ErrorCode> = {
  400: 'validation_failed',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  431: 'headers_too_large',
  503: 'unavailable',
};

/** Every error leaves as `{ error: { code, message, details } }` with the status of its code. */
@Catch()
export class ErrorEnvelopeFilter implements ExceptionFilter {
  private readonly logger = new Logger('errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const { status, body } = toEnvelope(exception);
    if (status >= 500) this.logger.error(exception instanceof Error ? exception.stack : String(exception));
    if (res.headersSent) return;
    if (status === 503 && !res.getHeader('Retry-After')) res.setHeader('Retry-After', '1');
    res.status(status).json(body);
  }
}

export function toEnvelope(exception: unknown): { status: number; body: { error: { code: string; message: string; details: unknown[] } } } {
  if (exception instanceof DomainError) {
    return {
      status: HTTP_STATUS[exception.code],
      body: { error: { code: exception.code, message: exception.message, details: exception.details } },
    };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const code = STATUS_CODE[status] ?? (status >= 500 ? 'internal' : 'validation_failed');
    const message = status === 404 ? 'route not found' : exception.message;
    return { status, body: { error: { code, message, details: [] } } };
  }
  if (isDatabaseUnavailable(exception)) {
    return { status: 503, body: { error: { code: 'unavailable', message: 'the database is unavailable or busy: retry shortly', details: [] } } };
  }
  return { status: 500, body: { error: { code: 'internal', message: 'internal error', details: [] } } };
}
