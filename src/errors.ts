/** The one error catalogue: every failure a client can see is one of these codes. */
export type ErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'insufficient_scope'
  | 'setup_disabled'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'session_ended'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'request_timeout'
  | 'rate_limited'
  | 'headers_too_large'
  | 'internal'
  | 'unavailable'
  | 'job_interrupted';

// A Record, so that a code without a status or title fails the type check.
export const ERROR_STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  insufficient_scope: 403,
  setup_disabled: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  session_ended: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  request_timeout: 408,
  rate_limited: 429,
  headers_too_large: 431,
  internal: 500,
  unavailable: 503,
  // Only ever the error of a failed job (src/jobs), never the status of a response.
  job_interrupted: 503,
};

export const ERROR_TITLE: Record<ErrorCode, string> = {
  invalid_request: 'Invalid request',
  unauthorized: 'Unauthorized',
  insufficient_scope: 'Insufficient scope',
  setup_disabled: 'Setup disabled',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  conflict: 'Conflict',
  session_ended: 'Session ended',
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  request_timeout: 'Request timeout',
  rate_limited: 'Rate limited',
  headers_too_large: 'Request header fields too large',
  internal: 'Internal error',
  unavailable: 'Service unavailable',
  job_interrupted: 'Job interrupted',
};

/**
 * A failure whose message says what to do (a bad setting, a database that does not fit, a model that
 * does not answer): the command line prints its message as one line, without a stack
 * (src/cli/failure.ts). Raised below the doors, so that a door recognizes it without importing
 * the layer that raised it.
 */
export class ActionableError extends Error {}

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

/** The SQLSTATE of a driver error: Postgres' own code for what failed. */
const sqlState = (error: unknown): unknown =>
  typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;

const UNIQUE_VIOLATION = '23505';
const FOREIGN_KEY_VIOLATION = '23503';

export function isUniqueViolation(error: unknown): boolean {
  return sqlState(error) === UNIQUE_VIOLATION;
}

/** A row refers to one that is gone, e.g. a subject purged meanwhile. */
export function isForeignKeyViolation(error: unknown): boolean {
  return sqlState(error) === FOREIGN_KEY_VIOLATION;
}

/** A 503 that tells the client when to come back. */
export class UnavailableError extends AppError {
  constructor(
    detail: string,
    readonly retryAfterSeconds: number,
  ) {
    super('unavailable', detail);
  }
}

/** Node's socket errors when the database cannot be reached at all. */
const CONNECTION_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);
/**
 * Postgres ends the session with these: 57P01 an administrator (a fast or immediate shutdown,
 * pg_terminate_backend), 57P02 a crash of another backend, 57P03 a server still starting or
 * recovering, 57P04 a dropped database, 57P05 idle_session_timeout, 25P03
 * idle_in_transaction_session_timeout; 53300 refuses a connection beyond max_connections; 3D000 is
 * a database that no longer exists.
 */
const OUTAGE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '57P04', '57P05', '25P03', '53300', '3D000']);
/**
 * node-postgres raises these as plain errors, known only by their message: a connection that ended,
 * or a statement sent on one that had failed or been ended for it (src/db/connect.ts).
 */
const OUTAGE_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect$/,
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
];

function isDatabaseOutage(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  // Several addresses tried at once fail together (happy eyeballs).
  if (error instanceof AggregateError) return error.errors.length > 0 && error.errors.every(isDatabaseOutage);
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    // SQLSTATE class 08: connection exception.
    if (CONNECTION_ERRNOS.has(code) || OUTAGE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
  }
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' && OUTAGE_MESSAGES.some((m) => m.test(message));
}

/** How long a client should wait before retrying while the database is away. */
const OUTAGE_RETRY_SECONDS = 5;

/**
 * The one translation of failures that are not the client's: a database that cannot be reached is
 * a 503 to retry later, not a 500. Undefined for anything else.
 */
export function outageError(error: unknown): UnavailableError | undefined {
  if (!isDatabaseOutage(error)) return undefined;
  return new UnavailableError('the database is unavailable; retry shortly', OUTAGE_RETRY_SECONDS);
}
