import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createApp } from '../../src/app.js';
import type { Core } from '../../src/domain/core.js';
import { createHttpServer } from '../../src/http/server.js';
import { testCore } from './harness.js';

/** An app on a real port, for requests that a test holds open; its spool folder is a fresh one. */
export interface Served {
  core: Core;
  base: string;
  port: number;
  spoolDir: string;
  /** The names in the spool folder. */
  spools(): string[];
  /** The bytes of the import bodies spooled in it. */
  spooledBytes(): number;
  close(): Promise<void>;
}

export async function serve(config: Record<string, string> = {}, adjust?: (core: Core) => Core): Promise<Served> {
  const spoolDir = mkdtempSync(path.join(os.tmpdir(), 'spool-test-'));
  const base = await testCore({ config: { SPOOL_DIR: spoolDir, ...config } });
  const core = adjust ? adjust(base) : base;
  const server = createHttpServer(createApp(core), core.config.httpLimits).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    core,
    base: `http://127.0.0.1:${port}`,
    port,
    spoolDir,
    spools: () => readdirSync(spoolDir),
    spooledBytes: () =>
      readdirSync(spoolDir).reduce((sum, name) => {
        try {
          return sum + statSync(path.join(spoolDir, name, 'body')).size;
        } catch {
          return sum;
        }
      }, 0),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      rmSync(spoolDir, { recursive: true, force: true });
    },
  };
}

/** A request whose body the test writes as it likes; `response` settles when the server answers. */
export function openRequest(
  served: Served,
  method: string,
  path_: string,
  headers: Record<string, string>,
): { req: http.ClientRequest; response: Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> } {
  const req = http.request({ host: '127.0.0.1', port: served.port, method, path: path_, headers });
  const response = new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>(
    (resolve, reject) => {
      req.once('error', reject);
      req.once('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.once('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
        );
        res.once('error', reject);
      });
    },
  );
  // A server that answers before the body is in may close the connection under it.
  response.catch(() => undefined);
  req.on('error', () => undefined);
  req.flushHeaders();
  return { req, response };
}

/** Polls a condition that a request in flight makes true; the test's timeout bounds the wait. */
export async function waitFor(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 20));
}
