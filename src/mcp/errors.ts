import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Core } from '../domain/core.js';
import { AppError, outageError, type ErrorCode } from '../errors.js';

/**
 * Domain errors as a model reads them: one line saying what went wrong and what to do next. The
 * domain speaks of anchors; MCP callers name them `subject`, so the word is translated.
 */
const speak = (detail: string): string => {
  const line = detail
    .trim()
    .replace(/[.\s]+$/, '')
    .replace(/\banchor_external_id\b/g, 'subject')
    .replace(/\banchor(s?)\b/g, 'subject$1');
  return line.charAt(0).toUpperCase() + line.slice(1);
};

const UNEXPECTED =
  'The memory service failed on this call (the error is logged on the server). Retry once; if it fails again, continue without memory.';

// A Record, so that a new error code without a message fails the type check.
const MESSAGES: Record<ErrorCode, (detail: string) => string> = {
  invalid_request: (d) => `Invalid arguments: ${d.trim().replace(/[.\s]+$/, '')}. Correct them and call again.`,
  unauthorized: (d) => `${speak(d)}. The client needs a valid API key.`,
  insufficient_scope: (d) => `${speak(d)}. Do not retry: ask the user for a key with that scope.`,
  setup_disabled: (d) => `${speak(d)}.`,
  not_found: (d) =>
    `${speak(d)}. Check the id or subject: use one returned by an earlier call (start_session returns session ids).`,
  method_not_allowed: (d) => `${speak(d)}.`,
  conflict: (d) =>
    /\bsession\b/.test(d)
      ? `${speak(d)}. Leave subject out, or start a session for that subject.`
      : `${speak(d)}. Retry the call.`,
  session_ended: (d) => `${speak(d)} (start_session), or store without session_id.`,
  payload_too_large: (d) => `${speak(d)}. Store shorter, self-contained statements, one fact per call.`,
  unsupported_media_type: (d) => `${speak(d)}.`,
  request_timeout: (d) => `${speak(d)}.`,
  rate_limited: (d) => `${speak(d)}.`,
  headers_too_large: (d) => `${speak(d)}.`,
  internal: () => UNEXPECTED,
  unavailable: () => 'The memory service is unavailable right now; retry shortly, or continue without memory.',
  job_interrupted: (d) => `${speak(d)}.`,
};

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();

/**
 * The one place where a failure becomes an MCP tool result: a domain error as an `isError` result
 * with an actionable line, anything else logged and answered without internals.
 */
export function toolError(core: Core, tool: string, failure: unknown): CallToolResult {
  const error = outageError(failure) ?? failure;
  let text: string;
  if (error instanceof AppError) {
    text = MESSAGES[error.code](error.detail);
  } else {
    core.log.error({ err: error, tool }, 'mcp tool failed');
    text = UNEXPECTED;
  }
  return { isError: true, content: [{ type: 'text', text: oneLine(text) }] };
}

/** JSON-RPC error codes for resource reads; -32002 is the MCP specification's "resource not found". */
const RESOURCE_NOT_FOUND = -32002;
const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

/**
 * Resources have no isError result: a failed read is a JSON-RPC error. The SDK sends a thrown
 * error's `code` and `message` as they are, so this error carries both without McpError's prefix.
 */
export class ResourceError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'ResourceError';
  }
}

/** The counterpart of toolError for resource reads: another tenant's resource reads as a missing one. */
export function resourceError(core: Core, uri: string, failure: unknown): ResourceError {
  if (failure instanceof ResourceError) return failure;
  const error = outageError(failure) ?? failure;
  if (error instanceof AppError) {
    if (error.code === 'not_found') return new ResourceError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`);
    const code = error.code === 'insufficient_scope' ? INVALID_REQUEST : INVALID_PARAMS;
    return new ResourceError(code, oneLine(MESSAGES[error.code](error.detail)));
  }
  core.log.error({ err: error, uri }, 'mcp resource read failed');
  return new ResourceError(INTERNAL_ERROR, 'internal error; it has been logged on the server');
}

export const resourceNotFound = (uri: string): ResourceError =>
  new ResourceError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`);
