import { createServer, STATUS_CODES, type RequestListener, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { HttpLimitsConfig } from '../config.js';
import { AppError, ERROR_STATUS, toProblem } from '../errors.js';

/** Node's reasons for refusing a request before express sees it, as problems of the catalogue. */
function clientProblem(error: NodeJS.ErrnoException): AppError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new AppError('headers_too_large', 'the request headers are larger than the server accepts');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError('request_timeout', 'the request was not received in time');
    default:
      return new AppError('invalid_request', 'the request is not valid HTTP');
  }
}

/** A socket whose response has started must not get a second one written over it. */
const responseStarted = (socket: Duplex): boolean =>
  (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;

/**
 * The HTTP server of `serve`: explicit timeouts, so that a client trickling its headers or body
 * cannot hold a connection for Node's default five minutes, and problem documents for the requests
 * Node itself refuses (bad request line, oversized headers, timeouts), where express cannot answer.
 */
export function createHttpServer(app: RequestListener, limits: HttpLimitsConfig): Server {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node checks the two timeouts only this often (30 s by default), which would stretch short ones.
      connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs, limits.requestTimeoutMs),
    },
    app,
  );
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable || responseStarted(socket)) {
      socket.destroy();
      return;
    }
    const problem = toProblem(clientProblem(error));
    const body = JSON.stringify(problem);
    const status = ERROR_STATUS[problem.code];
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
        'Content-Type: application/problem+json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
  return server;
}
