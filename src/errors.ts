/** The one error catalogue: every failure a client can see is one of these codes. */
export type ErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'insufficient_scope'
  | 'setup_disabled'
  | 'not_found'
  | 'conflict'
  | 'session_ended'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal'
  | 'unavailable';

// A Record, so that a code without a status or title fails the type check.
export const ERROR_STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  insufficient_scope: 403,
  setup_disabled: 403,
  not_found: 404,
  conflict: 409,
  session_ended: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
};

export const ERROR_TITLE: Record<ErrorCode, string> = {
  invalid_request: 'Invalid request',
  unauthorized: 'Unauthorized',
  insufficient_scope: 'Insufficient scope',
  setup_disabled: 'Setup disabled',
  not_found: 'Not found',
  conflict: 'Conflict',
  session_ended: 'Session ended',
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  rate_limited: 'Rate limited',
  internal: 'Internal error',
  unavailable: 'Service unavailable',
};

export interface FieldError {
  path: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly errors?: FieldError[],
  ) {
    super(detail);
    this.name = 'AppError';
  }
}

export const notFound = (what: string): AppError => new AppError('not_found', `${what} not found`);

export interface Problem {
  type: string;
  title: string;
  status: number;
  code: ErrorCode;
  detail: string;
  errors?: FieldError[];
}

export function toProblem(error: AppError): Problem {
  return {
    type: `https://agent-memory.dev/errors/${error.code}`,
    title: ERROR_TITLE[error.code],
    status: ERROR_STATUS[error.code],
    code: error.code,
    detail: error.detail,
    ...(error.errors ? { errors: error.errors } : {}),
  };
}

/** Postgres SQLSTATEs that mean the client named something that cannot exist. */
const INVALID_TEXT_REPRESENTATION = '22P02';

export function isInvalidTextRepresentation(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { code?: unknown }).code === INVALID_TEXT_REPRESENTATION
  );
}

export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}
