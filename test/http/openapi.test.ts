import { randomUUID } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import request, { type Response, type Test } from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { API_ROUTES, createApp } from '../../src/app.js';
import type { Database } from '../../src/db/schema.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { ProblemObject } from '../../src/schemas/objects.js';
import { startCore } from '../../src/start-core.js';
import { engine, newKey, newTenant, SETUP_TOKEN, testApi, testConfig, type TestApi } from '../helpers/harness.js';

/**
 * Issue 15 point 6: the document lists every status the code answers. Each operation of the
 * document is sent the requests that provoke the answers every route of its kind can give (bad
 * query, no key, a key without the scope, a body of another type or over the limit, an unknown id,
 * the rate limit, the database unreachable or failing); every answer's status must be listed for
 * that operation, and every error must be a problem document that the Problem schema accepts.
 */

type Json = Record<string, unknown>;
type Method = 'get' | 'post' | 'patch' | 'delete';
interface Operation {
  method: Method;
  path: string;
  op: Json;
  access: 'public' | 'setup' | 'bearer';
}
interface Seen {
  operation: Operation;
  why: string;
  res: Response;
}

// Nothing listens on port 1: every connection is refused, as when the database server is down.
const unreachablePool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/none', max: 2 });
unreachablePool.on('error', () => undefined);
const unreachable = new Kysely<Database>({ dialect: new PostgresDialect({ pool: unreachablePool }) });
afterAll(() => unreachable.destroy());

const StrictProblem = z.strictObject(ProblemObject.shape);

function operations(doc: Json): Operation[] {
  return Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => {
      const security = op.security as Json[];
      const access = security.length === 0 ? 'public' : 'setupToken' in security[0]! ? 'setup' : 'bearer';
      return { method: method as Method, path, op, access };
    }),
  );
}

/** The path with its parameters filled: an agent id where the route takes one, else an unknown UUID. */
const concrete = (path: string): string =>
  path.replace('/agents/{id}', '/agents/agent-x').replace(/\{\w+\}/g, () => randomUUID());

/** A body the route accepts, where it takes one, so that the check under test is the one reached. */
function validBody(o: { method: Method; path: string }): Json | undefined {
  if (o.method !== 'post') return undefined;
  const bodies: Record<string, Json> = {
    '/v1/setup': { org_name: `org-${randomUUID()}` },
    '/v1/keys': { name: 'k', scopes: ['read'] },
    '/v1/memories': { agent_id: 'a', content: 'Prefers tea' },
    '/v1/memories/batch': { items: [{ agent_id: 'a', content: 'Prefers tea' }] },
    '/v1/agents/{id}/conversations/ingest': { messages: [{ role: 'user', content: 'I prefer tea.' }] },
    '/v1/anchors': { anchor_external_id: 'c-1' },
    '/v1/sessions': { agent_id: 'a' },
    '/v1/canon': { agent_id: 'a', content: 'Be polite' },
  };
  return bodies[o.path];
}

function send(http: TestApi['http'], o: Operation, auth: Record<string, string>, query = '', body?: unknown): Test {
  let req = http[o.method](concrete(o.path) + query).set(auth);
  if (body !== undefined) req = req.send(body as object);
  return req;
}

describe(`every status the code answers is in the OpenAPI document (${engine})`, () => {
  let api: TestApi;
  let doc: Json;
  let ops: Operation[];
  const seen: Seen[] = [];
  const note = (operation: Operation, why: string, res: Response): void => {
    seen.push({ operation, why, res });
  };

  beforeAll(async () => {
    api = await testApi({ config: { AUTH_FAILURES_PER_MINUTE: '0' } });
    doc = (await api.http.get('/v1/openapi.json')).body as Json;
    ops = operations(doc);
  });

  it('covers every route of the table', () => {
    const documented = ops.map((o) => `${o.method} ${o.path}`).sort();
    for (const r of API_ROUTES) expect(documented).toContain(`${r.method} ${r.path}`);
  });

  it('lists the answers to a bad query, missing or weak keys, bodies of another type and unknown ids', async () => {
    const t = await newTenant(api);
    const admin = t.auth;
    const readOnly = (await newKey(api, t, ['read'])).auth;
    const writeOnly = (await newKey(api, t, ['write'])).auth;
    for (const o of ops) {
      const creds: Record<string, string> =
        o.access === 'setup' ? { 'X-Setup-Token': SETUP_TOKEN } : o.access === 'bearer' ? admin : {};
      const body = validBody(o);
      note(o, 'unknown query parameter', await send(api.http, o, creds, '?zz_unknown=1', body));
      if (o.access !== 'public') note(o, 'no credentials', await send(api.http, o, {}, '', body));
      const scope = /`(\w+)` scope/.exec(typeof o.op.description === 'string' ? o.op.description : '')?.[1];
      if (scope) {
        const weak = scope === 'read' ? writeOnly : scope === 'write' ? readOnly : readOnly;
        note(o, `a key without ${scope}`, await send(api.http, o, weak, '', body));
      }
      if (o.method === 'post') {
        note(o, 'text/plain body', await send(api.http, o, creds).set('Content-Type', 'text/plain').send('hello'));
      }
      if (o.method !== 'post') {
        note(o, 'a body on a route without one', await send(api.http, o, creds).send({ a: 1 }));
      }
      if (o.path.includes('{id}')) {
        // Unknown ids; the ingest route's id is an agent, so its unknown thing is a session.
        const unknown = o.path.includes('/agents/')
          ? { ...validBody(o), session_id: randomUUID() }
          : o.method === 'post'
            ? {}
            : undefined;
        note(o, 'unknown id', await send(api.http, o, creds, '', unknown));
      }
    }
    expect(seen.length).toBeGreaterThan(ops.length * 3);
  });

  it('lists 413 on every route that reads a body (POST, PATCH)', async () => {
    // The batch route takes 500 × 3 × CONTENT_LIMIT_CHARS bytes more (15,512 bytes here).
    const small = await testApi({
      config: { BODY_LIMIT_BYTES: '512', CONTENT_LIMIT_CHARS: '10', AUTH_FAILURES_PER_MINUTE: '0' },
    });
    const t = await newTenant(small);
    for (const o of ops.filter((op) => op.method === 'post' || op.method === 'patch')) {
      const creds = o.access === 'setup' ? { 'X-Setup-Token': SETUP_TOKEN } : t.auth;
      const res = await send(small.http, o, creds, '', { ...validBody(o), metadata: { pad: 'x'.repeat(20_000) } });
      expect(res.status, o.path).toBe(413);
      note(o, 'body over the limit', res);
    }
  });

  it('lists 429 on every route behind a key or token', async () => {
    const limited = await testApi({ config: { RATE_LIMIT_PER_MINUTE: '1', AUTH_FAILURES_PER_MINUTE: '0' } });
    const t = await newTenant(limited);
    for (const o of ops.filter((op) => op.access !== 'public')) {
      const creds = o.access === 'setup' ? { 'X-Setup-Token': SETUP_TOKEN } : t.auth;
      for (let i = 0; i < 2; i++) note(o, 'over the rate limit', await send(limited.http, o, creds, '', validBody(o)));
    }
    for (const o of ops.filter((op) => op.access !== 'public')) {
      expect(
        seen.some((s) => s.operation === o && s.res.status === 429),
        `${o.method} ${o.path}`,
      ).toBe(true);
    }
  });

  it('lists 503 while the database is unreachable and 500 when it fails otherwise', async () => {
    const t = await newTenant(api);
    const away = request(createApp({ ...api.core, db: unreachable }));
    // A core of its own, closed: the driver's errors are no outage, so they are the 500 of the catalogue.
    const running = await startCore(testConfig(), {
      embedder: createHashEmbedder(256),
      log: pino({ level: 'silent' }),
    });
    await running.close();
    const broken = request(createApp(running.core));
    for (const o of ops) {
      const creds: Record<string, string> =
        o.access === 'setup' ? { 'X-Setup-Token': SETUP_TOKEN } : o.access === 'bearer' ? t.auth : {};
      note(o, 'database unreachable', await send(away, o, creds, '', validBody(o)));
      note(o, 'database failing', await send(broken, o, creds, '', validBody(o)));
    }
    for (const o of ops.filter((op) => op.access !== 'public')) {
      const statuses = seen.filter((s) => s.operation === o).map((s) => s.res.status);
      expect(statuses, `${o.method} ${o.path}`).toContain(503);
      expect(statuses, `${o.method} ${o.path}`).toContain(500);
    }
  });

  it('lists 409 on recall for a session of another subject', async () => {
    const t = await newTenant(api);
    const session = await api.http.post('/v1/sessions').set(t.auth).send({ agent_id: 'a', anchor_external_id: 's-1' });
    const recall = ops.find((o) => o.path === '/v1/memories/recall')!;
    const res = await api.http
      .get('/v1/memories/recall')
      .set(t.auth)
      .query({ agent_id: 'a', query: 'x', anchor_external_id: 's-2', session_id: session.body.id as string });
    expect(res.status).toBe(409);
    note(recall, 'session of another subject', res);
  });

  it('finds each answer listed for its operation, and each error a valid problem document', () => {
    const unlisted: string[] = [];
    const invalid: string[] = [];
    for (const { operation: o, why, res } of seen) {
      const responses = o.op.responses as Record<string, Json>;
      const where = `${o.method.toUpperCase()} ${o.path} (${why}): ${res.status}`;
      if (!responses[String(res.status)]) unlisted.push(where);
      if (res.status >= 400) {
        const content = responses[String(res.status)]?.content as Json | undefined;
        if (!content?.['application/problem+json']) invalid.push(`${where} has no problem schema in the document`);
        if (!/^application\/problem\+json/.test(String(res.headers['content-type']))) invalid.push(`${where} type`);
        const parsed = StrictProblem.safeParse(res.body);
        if (!parsed.success || parsed.data.status !== res.status) invalid.push(`${where}: ${res.text.slice(0, 200)}`);
      }
    }
    expect(unlisted).toEqual([]);
    expect(invalid).toEqual([]);
    // Every kind of answer was reached, not only listed.
    const statuses = new Set(seen.map((s) => s.res.status));
    for (const status of [400, 401, 403, 404, 409, 413, 415, 429, 500, 503]) expect(statuses).toContain(status);
  });
});

describe('methods a path does not answer', () => {
  it('answer 405 with an Allow header naming exactly the methods the document lists for the path', async () => {
    const api = await testApi();
    const doc = (await api.http.get('/v1/openapi.json')).body as Json;
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Json>)) {
      const res = await api.http.put(concrete(path));
      expect(res.status, path).toBe(405);
      expect(StrictProblem.parse(res.body).code).toBe('method_not_allowed');
      const allowed = String(res.headers.allow)
        .split(', ')
        .filter((m) => m !== 'HEAD')
        .map((m) => m.toLowerCase());
      expect(allowed.sort(), path).toEqual(Object.keys(ops).sort());
    }
  });
});

describe('the OpenAPI document itself', () => {
  it('names every operation, refers to named schemas, and describes every error as a Problem', async () => {
    const api = await testApi();
    const doc = (await api.http.get('/v1/openapi.json')).body as Json;
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(doc.info).toMatchObject({ license: { name: 'Apache-2.0', identifier: 'Apache-2.0' } });
    const components = doc.components as Record<string, Record<string, Json>>;
    for (const name of ['Memory', 'StoredMemory', 'Anchor', 'Session', 'CanonEntry', 'Problem', 'RecallResult'])
      expect(components.schemas, name).toHaveProperty(name);
    expect(components.responses).toHaveProperty('MethodNotAllowed');
    const ids = operations(doc).map((o) => o.op.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const text = JSON.stringify(doc);
    // Every $ref resolves to a component.
    for (const [, kind, name] of text.matchAll(/"\$ref":"#\/components\/(\w+)\/(\w+)"/g)) {
      expect(components[kind!], `${kind}/${name}`).toHaveProperty(name!);
    }
    expect(text).not.toContain('#/$defs/');
    const recall = (doc.paths as Record<string, Record<string, Json>>)['/v1/memories/recall']!.get!;
    const ok = (recall.responses as Record<string, Json>)['200']!.content as Record<string, { schema: Json }>;
    expect(ok['application/json']!.schema).toEqual({ $ref: '#/components/schemas/RecallResponse' });
    const store = (doc.paths as Record<string, Record<string, Json>>)['/v1/memories']!.post!;
    expect(store.operationId).toBe('storeMemory');
    expect(Object.keys(store.responses as Json)).toEqual(
      expect.arrayContaining(['200', '201', '400', '401', '403', '404', '409', '413', '415', '429', '500', '503']),
    );
    const body = (store.requestBody as Json).content as Record<string, { schema: Json }>;
    expect(body['application/json']!.schema).toEqual({ $ref: '#/components/schemas/StoreMemoryRequest' });
    expect(components.schemas!.StoreMemoryRequest!.additionalProperties).toBe(false);
  });
});
