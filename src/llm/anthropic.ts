import Anthropic, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from '@anthropic-ai/sdk';
import { CircuitOpen } from './breaker.js';

/**
 * How we call Claude, for every caller (the contradiction judge, the fact extractor): one client
 * configuration, one deadline per call, one way of describing a failure to the log without content.
 */

export interface AnthropicClientOptions {
  readonly apiKey: string;
  /** Unset: the public API. */
  readonly baseURL?: string | undefined;
  /** The SDK's per-attempt timeout; callers bound the whole call, retry included, with a deadline. */
  readonly timeoutMs: number;
}

export function createAnthropicClient(options: AnthropicClientOptions): Anthropic {
  return new Anthropic({
    apiKey: options.apiKey,
    // null, not undefined: undefined makes the SDK read ANTHROPIC_BASE_URL itself, and only
    // src/config.ts reads the environment.
    baseURL: options.baseURL ?? null,
    timeout: options.timeoutMs,
    // One retry, for a 429 or a 5xx that comes back fast; the caller's deadline bounds both tries.
    maxRetries: 1,
    // The SDK logs through console (stdout, which the MCP stdio transport owns) and, at debug
    // level, request bodies: failures are logged by the callers instead, without content.
    logLevel: 'off',
    // Spans, if the application ever registers a tracer, must not carry memory content.
    openTelemetry: { traces: { contentMode: 'metadata_only' } },
  });
}

/** A tool answer that is not exactly what its schema asked for. */
export class MalformedAnswer extends Error {
  override readonly name = 'MalformedAnswer';
}

/**
 * Why a call failed, for the log: the kind and status only. Error messages are left out: an API
 * error's message is the server's text, which may quote the request, that is, memory content.
 */
export function failureOf(error: unknown, deadlineHit: boolean): Record<string, unknown> {
  if (deadlineHit || error instanceof APIConnectionTimeoutError) return { reason: 'timeout' };
  if (error instanceof APIUserAbortError) return { reason: 'aborted' };
  if (error instanceof APIConnectionError) return { reason: 'connection' };
  if (error instanceof APIError) {
    return { reason: 'http', status: error.status, ...(error.requestID ? { requestId: error.requestID } : {}) };
  }
  if (error instanceof MalformedAnswer) return { reason: 'malformed' };
  if (error instanceof CircuitOpen) return { reason: 'circuit_open' };
  return { reason: 'unexpected', type: error instanceof Error ? error.name : typeof error };
}

/** Text inside the prompt's tags: content must not be able to close its tag and add its own. */
export function escapeTags(text: string): string {
  return text.replace(/</gu, '&lt;').replace(/>/gu, '&gt;');
}

/** A value for a double-quoted attribute of the prompt's tags. */
export function escapeAttribute(text: string): string {
  return escapeTags(text).replace(/"/gu, '&quot;').replace(/\s+/gu, ' ');
}
