import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES, createApp } from '../../src/app.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { startCore } from '../../src/start-core.js';
import { engine, newTenant, SETUP_TOKEN, testApi, testConfig } from '../helpers/harness.js';
import { expectProblem } from '../helpers/problem.js';

const OPS_PATHS = ['/', '/healthz', '/readyz', '/metrics', '/v1/openapi.json', '/docs'];

describe(`operations on ${engine}`, () => {
  it('answers /healthz and /readyz with 200 and no key', async () => {
    const api = await testApi();
    const health = await api.http.get('/healthz');
    expect({ status: health.status, body: health.body }).toEqual({ status: 200, body: { status: 'ok' } });
    const ready = await api.http.get('/readyz');
    expect({ status: ready.status, body: ready.body }).toEqual({ status: 200, body: { status: 'ready' } });
  });

  it('serves Prometheus text that counts requests by route template', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    await api.http.get('/healthz');
    await api.http.get(`/v1/anchors/${randomUUID()}`).set(t.auth);
    const res = await api.http.get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toContain('# TYPE http_requests_total counter');
    expect(res.text).toMatch(/^http_requests_total\{method="GET",route="\/healthz",status="200"\} 1$/m);
    // The template, never the id, so that label cardinality stays bounded.
    expect(res.text).toMatch(/^http_requests_total\{method="GET",route="\/v1\/anchors\/\{id\}",status="404"\} 1$/m);
  });

  it('publishes an OpenAPI 3.1 document with every route of the route table', async () => {
    const api = await testApi();
    const res = await api.http.get('/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    const documented = Object.entries(res.body.paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, ops]) => Object.keys(ops).map((method) => `${method} ${path}`),
    );
    const expected = [...API_ROUTES.map((r) => `${r.method} ${r.path}`), ...OPS_PATHS.map((p) => `get ${p}`)];
    expect(documented.sort()).toEqual(expected.sort());
    expect(res.body.paths['/v1/memories'].post.security).toEqual([{ bearer: [] }]);
    expect(res.body.paths['/v1/setup'].post.security).toEqual([{ setupToken: [] }]);
    // Every route that embeds text documents the answer of a failing embedding service.
    for (const [path, method] of [
      ['/v1/memories', 'post'],
      ['/v1/memories/recall', 'get'],
      ['/v1/canon', 'post'],
      ['/v1/agents/{id}/conversations/ingest', 'post'],
    ] as const) {
      expect(res.body.paths[path][method].responses['503']?.description).toMatch(/embedding service/);
    }
  });

  it('answers an unknown route with a 404 problem, an unknown method of a known path with 405', async () => {
    const api = await testApi();
    expectProblem(await api.http.get('/v1/nothing-here'), 404, 'not_found');
    expectProblem(await api.http.post('/healthz').send({}), 405, 'method_not_allowed');
  });

  it('answers 429 with Retry-After once a key has used its allowance', async () => {
    const api = await testApi({ config: { RATE_LIMIT_PER_MINUTE: '2' } });
    const t = await newTenant(api);
    expect((await api.http.get('/v1/anchors').set(t.auth)).status).toBe(200);
    expect((await api.http.get('/v1/anchors').set(t.auth)).status).toBe(200);
    const limited = await api.http.get('/v1/anchors').set(t.auth);
    expectProblem(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });
});

describe(`with the database gone, on ${engine}`, () => {
  let http: ReturnType<typeof request>;

  beforeAll(async () => {
    // A core of its own, closed before use: the shared one must keep working for other tests.
    const running = await startCore(testConfig(), {
      embedder: createHashEmbedder(256),
      log: pino({ level: 'silent' }),
    });
    await running.close();
    http = request(createApp(running.core));
  });

  it('stays live but not ready', async () => {
    expect((await http.get('/healthz')).status).toBe(200);
    expectProblem(await http.get('/readyz'), 503, 'unavailable');
  });

  it('answers 500 internal without a stack, SQL or driver message', async () => {
    const responses = [
      await http.post('/v1/setup').set('X-Setup-Token', SETUP_TOKEN).send({ org_name: 'gone' }),
      await http.get('/v1/anchors').set({ Authorization: `Bearer mk_${'Ab1'.repeat(14)}` }),
    ];
    for (const res of responses) {
      expectProblem(res, 500, 'internal');
      expect(Object.keys(res.body).sort()).toEqual(['code', 'detail', 'status', 'title', 'type']);
      const text = res.text.toLowerCase();
      for (const leak of ['select', 'insert', 'pglite', 'pool', 'kysely', 'driver', 'destroyed', 'error:']) {
        expect(text).not.toContain(leak);
      }
      // Stack frames: "at fn (file:line:col)", "at /path", "at node:internal".
      expect(text).not.toMatch(/\bat \S+ \(|\bat (\/|file:|node:)|:\d+:\d+/);
    }
  });
});
