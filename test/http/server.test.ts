import { connect, type AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { createHttpServer } from '../../src/http/server.js';
import { testCore } from '../helpers/harness.js';

// The port the kernel gave the server under test.
let port = 0;

/** Writes raw bytes to the server and collects what it answers until it closes the connection. */
function exchange(chunks: (string | { wait: number })[]): Promise<{ answer: string; unsent: number }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    let closed = false;
    let unsent = chunks.length;
    socket.setEncoding('utf8');
    socket.on('data', (data: string) => (answer += data));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      resolve({ answer, unsent });
    });
    void (async () => {
      for (const chunk of chunks) {
        if (closed) return;
        if (typeof chunk === 'string') socket.write(chunk);
        else await new Promise((r) => setTimeout(r, chunk.wait));
        unsent--;
      }
    })().catch(reject);
  });
}

function problemOf(answer: string): { status: number; contentType: string; body: Record<string, unknown> } {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  const contentType = /^content-type: (.*)$/im.exec(head)?.[1] ?? '';
  return { status, contentType, body: JSON.parse(body) as Record<string, unknown> };
}

describe('the HTTP server', () => {
  let server: Server | undefined;

  async function start(config: Record<string, string> = {}): Promise<void> {
    const core = await testCore({ config });
    const started = createHttpServer(createApp(core), core.config.httpLimits);
    server = started;
    await new Promise<void>((resolve) => started.listen(0, '127.0.0.1', resolve));
    port = (started.address() as AddressInfo).port;
  }

  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  it('cuts a request whose body trickles in, with a 408 problem', async () => {
    await start({ HTTP_HEADERS_TIMEOUT_MS: '300', HTTP_REQUEST_TIMEOUT_MS: '600' });
    const head =
      'POST /v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
      'Authorization: Bearer x\r\nContent-Length: 100\r\n\r\n';
    const trickle = Array.from({ length: 100 }, () => [{ wait: 200 }, ' ']).flat();
    const { answer, unsent } = await exchange([head, ...trickle]);
    expect(unsent).toBeGreaterThan(0);
    const problem = problemOf(answer);
    expect(problem.status).toBe(408);
    expect(problem.contentType).toMatch(/^application\/problem\+json/);
    expect(problem.body).toMatchObject({ status: 408, code: 'request_timeout' });
  });

  it('answers a malformed request line with a 400 problem', async () => {
    await start();
    const problem = problemOf((await exchange(['NOT HTTP AT ALL\r\n\r\n'])).answer);
    expect(problem.status).toBe(400);
    expect(problem.contentType).toMatch(/^application\/problem\+json/);
    expect(problem.body).toMatchObject({ status: 400, code: 'invalid_request', detail: expect.any(String) });
  });

  it('answers oversized headers with a 431 problem', async () => {
    await start();
    const request = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`;
    const problem = problemOf((await exchange([request])).answer);
    expect(problem.status).toBe(431);
    expect(problem.contentType).toMatch(/^application\/problem\+json/);
    expect(problem.body).toMatchObject({ status: 431, code: 'headers_too_large' });
  });
});
