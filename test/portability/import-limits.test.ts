import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { engine, newTenant, testApi, type Tenant } from '../helpers/harness.js';
import { expectProblem } from '../helpers/problem.js';
import { memoryRecord } from '../helpers/portability.js';
import { openRequest, serve, waitFor, type Served } from '../helpers/open-requests.js';

const header = JSON.stringify({ type: 'header', format: 'agent-memory-export', version: 1, embedder: 'any' });

const memoryLine = (content: string): string => JSON.stringify(memoryRecord(content));

/** About `bytes` of valid import lines (a header, then memories of 1,000 characters). */
function importBody(bytes: number): string {
  const lines = [header];
  let size = header.length;
  for (let i = 0; size < bytes; i++) {
    const line = memoryLine(`fact ${i} ${randomUUID()} ${'x'.repeat(900)}`);
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

const ndjson = { 'Content-Type': 'application/x-ndjson' };

/** A tenant of the worker's database, which the served apps share. */
async function tenant(): Promise<Tenant> {
  return newTenant(await testApi());
}

describe(`import and export query parameters on ${engine}`, () => {
  it('refuses unknown ones with 400 naming them, before the body is imported', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const dry = await api.http
      .post('/v1/import?dry_run=true')
      .set(t.auth)
      .set(ndjson)
      .send(`${header}\n${memoryLine('imported by a dry run')}\n`);
    expectProblem(dry, 400, 'invalid_request');
    expect(dry.body.errors).toEqual([{ path: 'dry_run', message: 'is not a known field' }]);
    const csv = await api.http.get('/v1/export?format=csv').set(t.auth);
    expectProblem(csv, 400, 'invalid_request');
    expect(csv.body.errors).toEqual([{ path: 'format', message: 'is not a known field' }]);
    // Nothing of the refused import is in the tenant.
    const exported = await api.http.get('/v1/export').set(t.auth).buffer(true);
    expect(exported.status).toBe(200);
    expect(exported.text).not.toContain('imported by a dry run');
    // The real parameters still work.
    const real = await api.http
      .post('/v1/import?format=agent-memory&agent_id=a')
      .set(t.auth)
      .set(ndjson)
      .send(`${header}\n${memoryLine('kept')}\n`);
    expect(real.status).toBe(200);
  });
});

describe(`POST /v1/import bounds what it spools on ${engine}`, () => {
  let served: Served | undefined;
  afterEach(async () => {
    await served?.close();
    served = undefined;
  });

  it('answers 413 for a compressed body over IMPORT_MAX_BYTES once decompressed, and leaves no spool behind', async () => {
    served = await serve({ IMPORT_MAX_BYTES: '2000000', IMPORT_MAX_COMPRESSION_RATIO: '100000' });
    const t = await tenant();
    const gzipped = gzipSync(importBody(3_000_000));
    const res = await fetch(`${served.base}/v1/import`, {
      method: 'POST',
      headers: { ...t.auth, ...ndjson, 'Content-Encoding': 'gzip' },
      body: gzipped,
    });
    expect(res.status).toBe(413);
    const problem = (await res.json()) as { code: string; detail: string };
    expect(problem.code).toBe('payload_too_large');
    expect(problem.detail).toContain('IMPORT_MAX_BYTES');
    expect(served.spools()).toEqual([]);
  });

  it('refuses a declared length over IMPORT_MAX_BYTES before reading the body', async () => {
    served = await serve({ IMPORT_MAX_BYTES: '2000000' });
    const t = await tenant();
    // The headers say 3 MB; not a byte of the body is sent, so only an answer that reads none comes.
    const { req, response } = openRequest(served, 'POST', '/v1/import', {
      ...t.auth,
      ...ndjson,
      'Content-Length': '3000000',
    });
    const res = await response;
    req.destroy();
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'payload_too_large' });
  });

  it('stops a decompression bomb at IMPORT_MAX_COMPRESSION_RATIO with 413, having spooled a few MiB of it', async () => {
    served = await serve();
    const t = await tenant();
    // 256 MiB of blank lines in about 256 KiB: a ratio of 1,000.
    const bomb = gzipSync(Buffer.alloc(256 * 1024 * 1024, '\n'));
    // The largest the spooled body is seen to grow (a lower bound of its largest).
    let largest = 0;
    const watch = setInterval(() => {
      for (const name of served?.spools() ?? []) {
        try {
          largest = Math.max(largest, statSync(path.join(served!.spoolDir, name, 'body')).size);
        } catch {
          // not there yet, or gone
        }
      }
    }, 2);
    const res = await fetch(`${served.base}/v1/import`, {
      method: 'POST',
      headers: { ...t.auth, ...ndjson, 'Content-Encoding': 'gzip' },
      body: bomb,
    });
    clearInterval(watch);
    expect(res.status).toBe(413);
    const problem = (await res.json()) as { code: string; detail: string };
    expect(problem.code).toBe('payload_too_large');
    expect(problem.detail).toContain('IMPORT_MAX_COMPRESSION_RATIO');
    expect(largest).toBeLessThan(64 * 1024 * 1024);
    expect(served.spools()).toEqual([]);
  });

  it('answers 503 with Retry-After when other imports hold SPOOL_MAX_BYTES, and takes the body once they are done', async () => {
    served = await serve({ SPOOL_MAX_BYTES: '200000' });
    const first = await tenant();
    const second = await tenant();
    const body = importBody(140_000);
    // The first import sends its body and holds the request open before its last line.
    const held = openRequest(served, 'POST', '/v1/import', { ...first.auth, ...ndjson });
    held.req.write(body.slice(0, 130_000));
    await waitFor(() => served!.spooledBytes() === 130_000);
    // Declared: refused before it is read.
    const declared = await fetch(`${served.base}/v1/import`, {
      method: 'POST',
      headers: { ...second.auth, ...ndjson, 'Content-Length': String(Buffer.byteLength(body)) },
      body,
    });
    expect(declared.status).toBe(503);
    expect(Number(declared.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await declared.json()) as { detail: string }).detail).toContain('spool space');
    // Not declared (chunked): refused once it needs more than is left, and its part is given back.
    const chunked = openRequest(served, 'POST', '/v1/import', { ...second.auth, ...ndjson });
    chunked.req.end(body);
    const refused = await chunked.response;
    expect(refused.status).toBe(503);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(served.spools()).toHaveLength(1);
    held.req.end(body.slice(130_000));
    expect((await held.response).status).toBe(200);
    // Once it is done, the space is free again.
    const retried = await fetch(`${served.base}/v1/import`, {
      method: 'POST',
      headers: { ...second.auth, ...ndjson },
      body,
    });
    expect(retried.status).toBe(200);
    expect(served.spools()).toEqual([]);
  });

  it('answers 429 past IMPORT_CONCURRENCY_PER_TENANT and 503 past IMPORT_CONCURRENCY, with Retry-After, unread', async () => {
    served = await serve({ IMPORT_CONCURRENCY_PER_TENANT: '1', IMPORT_CONCURRENCY: '2' });
    const [a, b, c] = [await tenant(), await tenant(), await tenant()];
    const holdA = openRequest(served, 'POST', '/v1/import', { ...a.auth, ...ndjson });
    holdA.req.write(`${header}\n`);
    await waitFor(() => served!.spools().length === 1);
    const again = await fetch(`${served.base}/v1/import`, {
      method: 'POST',
      headers: { ...a.auth, ...ndjson },
      body: '',
    });
    expect(again.status).toBe(429);
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await again.json()) as { code: string }).code).toBe('rate_limited');
    const holdB = openRequest(served, 'POST', '/v1/import', { ...b.auth, ...ndjson });
    holdB.req.write(`${header}\n`);
    await waitFor(() => served!.spools().length === 2);
    // The third tenant's import is refused without a byte of its body: the headers alone are sent.
    const third = openRequest(served, 'POST', '/v1/import', { ...c.auth, ...ndjson, 'Content-Length': '100' });
    const busy = await third.response;
    third.req.destroy();
    expect(busy.status).toBe(503);
    expect(Number(busy.headers['retry-after'])).toBeGreaterThan(0);
    holdA.req.end(`${memoryLine('a')}\n`);
    holdB.req.end(`${memoryLine('b')}\n`);
    expect((await holdA.response).status).toBe(200);
    expect((await holdB.response).status).toBe(200);
    const now = await fetch(`${served.base}/v1/import`, {
      method: 'POST',
      headers: { ...c.auth, ...ndjson },
      body: `${header}\n${memoryLine('c')}\n`,
    });
    expect(now.status).toBe(200);
  });
});
