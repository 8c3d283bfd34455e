import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for the Anthropic Messages API: POST /v1/messages on 127.0.0.1, answered by the
 * next queued responder, as the real API answers (a message, typically one tool_use block). Every
 * request is recorded in `seen`, whatever its path.
 */

/** Request bodies as the wire carries them: untyped JSON. */
export type Json = ReturnType<typeof JSON.parse>;

export interface Seen {
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly body: Json;
}

export type Responder = (res: ServerResponse, body: Json) => void;

export interface Usage {
  readonly input_tokens: number;
  readonly output_tokens: number;
}

export interface AnswerOptions {
  /** `tool_use` unless told. */
  readonly stopReason?: string;
  readonly usage?: Usage;
}

export interface MessagesApi {
  readonly baseURL: string;
  /** Every request so far, in order; emptied by `reset`. */
  readonly seen: Seen[];
  /** Queue responders for the next requests, one each. */
  enqueue(...responders: Responder[]): void;
  /** Forget what was seen and what was queued (between tests). */
  reset(): void;
  close(): Promise<void>;
  json(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void;
  /** A Messages API reply to the request `body`, with this content. */
  message(body: Json, content: unknown[], options?: AnswerOptions): Record<string, unknown>;
  /** Answers with one call of tool `name`; `input` may be a function of the request body. */
  toolAnswer(name: string, input: unknown, options?: AnswerOptions): Responder;
  /** Answers with an API error; retry-after-ms keeps the client's retry fast. */
  apiError(status: number, type: string, message?: string): Responder;
}

/** Never answers: the request hangs until the client gives up. */
export const hang: Responder = () => undefined;

export async function startMessagesApi(): Promise<MessagesApi> {
  const seen: Seen[] = [];
  const responders: Responder[] = [];

  function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${seen.length}`, ...headers });
    res.end(JSON.stringify(body));
  }

  function message(body: Json, content: unknown[], options: AnswerOptions = {}): Record<string, unknown> {
    return {
      id: `msg_${seen.length}`,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content,
      stop_reason: options.stopReason ?? 'tool_use',
      stop_sequence: null,
      usage: options.usage ?? { input_tokens: 400, output_tokens: 60 },
    };
  }

  function toolAnswer(name: string, input: unknown, options?: AnswerOptions): Responder {
    return (res, body) =>
      json(
        res,
        200,
        message(
          body,
          [
            {
              type: 'tool_use',
              id: `toolu_${seen.length}`,
              name,
              input: typeof input === 'function' ? (input as (b: Json) => unknown)(body) : input,
            },
          ],
          options,
        ),
      );
  }

  function apiError(status: number, type: string, text = 'test error'): Responder {
    return (res) => json(res, status, { type: 'error', error: { type, message: text } }, { 'retry-after-ms': '10' });
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const body = raw ? JSON.parse(raw) : undefined;
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      if (req.method !== 'POST' || req.url !== '/v1/messages') {
        json(res, 404, { type: 'error', error: { type: 'not_found_error', message: 'not found' } });
        return;
      }
      const next = responders.shift();
      if (next) next(res, body);
      else json(res, 500, { type: 'error', error: { type: 'api_error', message: 'no responder queued' } });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');

  return {
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    enqueue: (...next) => void responders.push(...next),
    reset() {
      seen.length = 0;
      responders.length = 0;
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
    json,
    message,
    toolAnswer,
    apiError,
  };
}

/** The URL of a port nothing listens on any more: connections to it are refused. */
export async function deadURL(): Promise<string> {
  const closed = createServer();
  closed.listen(0, '127.0.0.1');
  await once(closed, 'listening');
  const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
  closed.close();
  await once(closed, 'close');
  return url;
}
