import net from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { seedMemories } from '../../tools/portability/seed.js';
import { capturedLog } from '../helpers/captured-log.js';
import { engine, newTenant, testApi, type Tenant } from '../helpers/harness.js';
import { serve, waitFor, type Served } from '../helpers/open-requests.js';

/** A generous bound on an answer that must not wait for the stalled exports: far above any normal one. */
const PROMPT_MS = 30_000;

/**
 * A GET /v1/export whose client reads its first bytes (the status line) and then nothing more:
 * the kernel's buffers fill and the server's writes wait on it.
 */
interface StalledExport {
  socket: net.Socket;
  /** The status of the answer. */
  status: Promise<number>;
  /** Reads the rest; resolves with all bytes received once the server ends or cuts the connection. */
  drain(): Promise<string>;
}

function stalledExport(served: Served, tenant: Tenant): StalledExport {
  const socket = net.connect(served.port, '127.0.0.1');
  socket.write(
    `GET /v1/export HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${tenant.auth.Authorization}\r\nConnection: close\r\n\r\n`,
  );
  const received: Buffer[] = [];
  const status = new Promise<number>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('data', (chunk: Buffer) => {
      received.push(chunk);
      socket.pause();
      resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(chunk.toString('latin1'))?.[1]));
    });
  });
  socket.on('error', () => undefined);
  const drain = () =>
    new Promise<string>((resolve) => {
      socket.on('data', (chunk: Buffer) => received.push(chunk));
      socket.once('close', () => resolve(Buffer.concat(received).toString()));
      socket.resume();
    });
  return { socket, status, drain };
}

/** A tenant whose export (about 8 MB) is larger than what the sockets' buffers hold. */
async function largeTenant(): Promise<Tenant> {
  const api = await testApi();
  const t = await newTenant(api);
  await seedMemories(api.core.db, t.tenantId, {
    count: 1000,
    contentChars: 8000,
    dimensions: api.core.embedder.dimensions,
    embedderId: api.core.embedder.id,
  });
  return t;
}

/**
 * The export that a tenant gets once a turn is free: a turn is given back when the export that held
 * it has ended, a moment after its client has seen the end.
 */
async function exportOnceFree(served: Served, tenant: Tenant): Promise<Response> {
  for (;;) {
    const res = await fetch(`${served.base}/v1/export`, { headers: tenant.auth });
    if (res.status === 200) return res;
    expect([429, 503]).toContain(res.status);
    await res.text();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const within = <T>(ms: number, what: string, promise: Promise<T>): Promise<T> =>
  Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} waited over ${ms} ms`)), ms).unref()),
  ]);

describe(`GET /v1/export with clients that do not read, on ${engine}`, { timeout: 180_000 }, () => {
  let served: Served | undefined;
  let a: Tenant;
  beforeAll(async () => {
    a = await largeTenant();
  });
  const sockets: net.Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await served?.close();
    served = undefined;
  });

  it('never stalls another tenant: a dozen stalled exports hold no database connection', async () => {
    served = await serve();
    const b = await newTenant(await testApi());
    const stalled = Array.from({ length: 12 }, () => stalledExport(served!, a));
    sockets.push(...stalled.map((s) => s.socket));
    const statuses = await Promise.all(stalled.map((s) => s.status));
    // EXPORT_CONCURRENCY_PER_TENANT (2) run; the others are refused at once.
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
    // The other tenant's writes, reads and own export answer while the two exports wait on their clients.
    const req = (path: string, init: RequestInit = {}) =>
      within(
        PROMPT_MS,
        path,
        fetch(`${served!.base}${path}`, {
          ...init,
          headers: { ...b.auth, 'Content-Type': 'application/json', ...init.headers },
        }),
      );
    const stored = await req('/v1/memories', {
      method: 'POST',
      body: JSON.stringify({ agent_id: 'b', content: 'Prefers tea' }),
    });
    expect(stored.status).toBe(201);
    const recall = await req('/v1/memories/recall?agent_id=b&query=tea');
    expect(recall.status).toBe(200);
    const exported = await req('/v1/export');
    expect(exported.status).toBe(200);
    expect(await within(PROMPT_MS, 'the export body', exported.text())).toContain('Prefers tea');
  });

  it('cuts an export whose client takes nothing for EXPORT_WRITE_TIMEOUT_MS, and frees its turn and its file', async () => {
    const { log, lines } = capturedLog();
    served = await serve({ EXPORT_WRITE_TIMEOUT_MS: '500', EXPORT_CONCURRENCY_PER_TENANT: '1' }, (core) => ({
      ...core,
      log,
    }));
    const stalled = stalledExport(served, a);
    sockets.push(stalled.socket);
    expect(await stalled.status).toBe(200);
    await waitFor(() => lines.some((l) => l.includes('export cut')));
    // What the client then reads stops short: no end record.
    const got = await stalled.drain();
    expect(got.length).toBeGreaterThan(0);
    expect(got).not.toContain('"type":"end"');
    // Its file goes, and the tenant's one turn is free again (both once the export has ended).
    await waitFor(() => served!.spools().length === 0);
    const next = await exportOnceFree(served, a);
    const text = await next.text();
    expect(text.trimEnd().split('\n').at(-1)).toContain('"type":"end"');
  });

  it('answers 503 with Retry-After past EXPORT_CONCURRENCY, before touching the database', async () => {
    served = await serve({ EXPORT_CONCURRENCY: '2' });
    const c = await newTenant(await testApi());
    const holders = [stalledExport(served, a), stalledExport(served, a)];
    sockets.push(...holders.map((h) => h.socket));
    expect(await Promise.all(holders.map((h) => h.status))).toEqual([200, 200]);
    const busy = await fetch(`${served.base}/v1/export`, { headers: c.auth });
    expect(busy.status).toBe(503);
    expect(Number(busy.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await busy.json()) as { detail: string }).detail).toContain('EXPORT_CONCURRENCY');
    // A holder that reads to the end gives its turn back.
    expect(await holders[0]!.drain()).toContain('"type":"end"');
    const now = await exportOnceFree(served, c);
    expect(await now.text()).toContain('"type":"end"');
  });
});
