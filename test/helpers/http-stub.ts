import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local HTTP server on 127.0.0.1 that speaks whatever wire format a test scripts: each request is
 * recorded and answered by the handler. For the network embedders, which tests must never send to
 * the real services.
 */
export interface StubRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: ReturnType<typeof JSON.parse>;
}

export interface StubReply {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Answer only after this long (a timeout test). */
  delayMs?: number;
}

export interface HttpStub {
  url: string;
  requests: StubRequest[];
  close(): Promise<void>;
}

export async function startStub(handler: (req: StubRequest, n: number) => StubReply): Promise<HttpStub> {
  const requests: StubRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const request: StubRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: text ? JSON.parse(text) : undefined,
      };
      requests.push(request);
      const reply = handler(request, requests.length);
      const send = () => {
        timers.delete(timer);
        if (res.destroyed) return;
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
        res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
      };
      const timer = setTimeout(send, reply.delayMs ?? 0);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A deterministic vector of `dims` numbers for a text, not unit length (the embedders normalize). */
export function fakeVector(text: string, dims: number): number[] {
  return Array.from({ length: dims }, (_, i) => ((text.charCodeAt(i % Math.max(1, text.length)) || 1) % 7) + 1 + i);
}
