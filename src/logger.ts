import { pino, type Logger } from 'pino';

/**
 * Driver errors carry the failed query and its parameters, which hold memory content and key
 * hashes: only the error's kind, code, message and stack are logged.
 */
export function serializeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) };
  const code = (error as { code?: unknown }).code;
  return {
    type: error.name,
    message: error.message,
    ...(typeof code === 'string' ? { code } : {}),
    stack: error.stack,
  };
}

/**
 * JSON logs on stderr: stdout belongs to the MCP protocol in stdio mode. Authorization headers,
 * keys and tokens are redacted should any object carrying them ever be logged.
 */
export function createLogger(level: string): Logger {
  return pino(
    {
      level,
      base: { service: 'agent-memory' },
      serializers: { err: serializeError },
      redact: {
        paths: ['req.headers.authorization', 'req.headers["x-setup-token"]', 'api_key', 'apiKey', 'token'],
        censor: '[redacted]',
      },
    },
    pino.destination(2),
  );
}
