/** The one domain error type: a code from the table below, a message, optional details. */
export type ErrorCode =
  | 'validation_failed'
  | 'invalid_json'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'invalid_state'
  | 'quota_exceeded'
  | 'rate_limited'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'headers_too_large'
  | 'unavailable'
  | 'internal';

export const HTTP_STATUS: Record<ErrorCode, number> = {
  validation_failed: 400,
  invalid_json: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  invalid_state: 409,
  quota_exceeded: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  headers_too_large: 431,
  unavailable: 503,
  internal: 500,
};

export interface ErrorDetail {
  field?: string;
  problem: string;
}

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const notFound = (what: string, id: string) => new DomainError('not_found', `${what} ${id} not found`);
