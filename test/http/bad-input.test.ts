import { describe, expect, it } from 'vitest';
import { newTenant, testApi } from '../helpers/harness.js';
import { expectProblem } from '../helpers/problem.js';

const LONE = '\ud800';
const cursorOf = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('bad input is a 4xx problem, never a 500', () => {
  it('refuses a lone UTF-16 surrogate in any stored string, naming the field', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const session = await api.http.post('/v1/sessions').set(t.auth).send({ agent_id: 'a' });
    expect(session.status).toBe(201);
    const cases: [string, string, Record<string, unknown>, string][] = [
      ['post', '/v1/memories', { agent_id: 'a', content: 'x', metadata: { k: LONE } }, 'metadata'],
      ['post', '/v1/memories', { agent_id: 'a', content: 'x', metadata: { [LONE]: 1 } }, 'metadata'],
      ['post', '/v1/memories', { agent_id: 'a', content: 'x', metadata: { a: [{ b: `x${LONE}` }] } }, 'metadata'],
      ['post', '/v1/memories', { agent_id: 'a', content: `x${LONE}` }, 'content'],
      ['post', '/v1/memories', { agent_id: `a${LONE}`, content: 'x' }, 'agent_id'],
      ['post', '/v1/anchors', { anchor_external_id: 'c-1', metadata: { k: LONE } }, 'metadata'],
      ['post', '/v1/anchors', { anchor_external_id: `c${LONE}` }, 'anchor_external_id'],
      ['post', '/v1/sessions', { agent_id: 'a', metadata: { k: LONE } }, 'metadata'],
      ['post', '/v1/canon', { agent_id: 'a', content: 'rule', metadata: { k: LONE } }, 'metadata'],
      ['post', '/v1/keys', { name: `k${LONE}` }, 'name'],
      [
        'post',
        '/v1/agents/a/conversations/ingest',
        { messages: [{ role: 'user', content: 'hi' }], metadata: { k: LONE } },
        'metadata',
      ],
      [
        'post',
        '/v1/agents/a/conversations/ingest',
        { messages: [{ role: 'user', content: 'hi' }], conversation_id: LONE },
        'conversation_id',
      ],
      [
        'post',
        '/v1/agents/a/conversations/ingest',
        { messages: [{ role: 'user', content: 'hi', id: LONE }] },
        'messages.0.id',
      ],
    ];
    for (const [, path, body, field] of cases) {
      const res = await api.http.post(path).set(t.auth).send(body);
      expectProblem(res, 400, 'invalid_request');
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
    }
    // Query strings and paths arrive as UTF-8 bytes, where a surrogate has no encoding: a path escape
    // of one is refused as bad percent-encoding.
    expectProblem(await api.http.get('/v1/anchors/x%ED%A0%80').set(t.auth), 400, 'invalid_request');
  });

  it('keeps well-formed text outside the BMP', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const res = await api.http
      .post('/v1/memories')
      .set(t.auth)
      .send({ agent_id: 'a', content: 'likes 🍕', metadata: { '🍕': '😀' } });
    expect(res.status).toBe(201);
    expect(res.body.content).toBe('likes 🍕');
    expect(res.body.metadata).toEqual({ '🍕': '😀' });
  });

  it('answers a forged audit cursor with 400', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    for (const forged of [[1.5], [1e20], [-1], ['1'], [1, 2]]) {
      expectProblem(
        await api.http
          .get('/v1/audit')
          .set(t.auth)
          .query({ cursor: cursorOf(forged) }),
        400,
        'invalid_request',
      );
    }
    expect(
      (
        await api.http
          .get('/v1/audit')
          .set(t.auth)
          .query({ cursor: cursorOf([0]) })
      ).status,
    ).toBe(200);
  });

  it('answers dates outside the years 1970..9999 with 400', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    for (const since of ['0000-01-01T00:00:00Z', '1969-12-31T23:59:59Z', '+010000-01-01T00:00:00Z']) {
      expectProblem(await api.http.get('/v1/audit').set(t.auth).query({ since }), 400, 'invalid_request');
    }
    expect((await api.http.get('/v1/audit').set(t.auth).query({ since: '2020-01-01T00:00:00Z' })).status).toBe(200);
    const ingest = await api.http
      .post('/v1/agents/a/conversations/ingest')
      .set(t.auth)
      .send({ messages: [{ role: 'user', content: 'hi', created_at: '0001-01-01T00:00:00Z' }] });
    expectProblem(ingest, 400, 'invalid_request');
    expect(ingest.body.errors[0].path).toBe('messages.0.created_at');
  });

  it('answers a body its Content-Encoding cannot decode with 400, an unknown encoding with 415', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const body = JSON.stringify({ agent_id: 'a', content: 'x' });
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const res = await api.http
        .post('/v1/memories')
        .set(t.auth)
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', encoding)
        .send(body);
      expectProblem(res, 400, 'invalid_request');
    }
    const unknown = await api.http
      .post('/v1/memories')
      .set(t.auth)
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'x-unknown')
      .send(body);
    expectProblem(unknown, 415, 'unsupported_media_type');
  });
});

describe('JSON-RPC batches on /mcp', () => {
  const recallCall = (id: number) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'recall', arguments: { query: 'anything', agent_id: 'a' } },
  });
  const batch = (n: number) => Array.from({ length: n }, (_, i) => recallCall(i + 1));

  it('count every call of a batch against the key', async () => {
    const api = await testApi({ config: { RATE_LIMIT_PER_MINUTE: '60' } });
    const t = await newTenant(api);
    const post = (body: unknown) =>
      api.http
        .post('/mcp')
        .set(t.auth)
        .set('Accept', 'application/json, text/event-stream')
        .send(body as object);
    const first = await post(batch(40));
    expect(first.status).toBe(200);
    expect(first.body).toHaveLength(40);
    expectProblem(await post(batch(40)), 429, 'rate_limited');
    // More calls than a minute's allowance are never let through.
    const api2 = await testApi({ config: { RATE_LIMIT_PER_MINUTE: '60' } });
    const t2 = await newTenant(api2);
    const huge = await api2.http
      .post('/mcp')
      .set(t2.auth)
      .set('Accept', 'application/json, text/event-stream')
      .send(batch(100));
    expectProblem(huge, 429, 'rate_limited');
  });
});

describe('validation speaks plain words (issue 15 point 8)', () => {
  it('says what a field must be, never zod codes or "received NaN"', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const recall = (query: Record<string, unknown>) =>
      api.http
        .get('/v1/memories/recall')
        .set(t.auth)
        .query({ agent_id: 'a', query: 'x', ...query });
    for (const limit of ['abc', '1.5', '0', '500', '']) {
      const res = await recall({ limit });
      expectProblem(res, 400, 'invalid_request');
      expect(res.body.detail, limit).toBe('limit must be a whole number between 1 and 100');
    }
    const cases: [string, Record<string, unknown>, string][] = [
      ['/v1/memories', { content: 'x' }, 'agent_id is required'],
      ['/v1/memories', { agent_id: 'a', content: 5 }, 'content must be a string'],
      ['/v1/memories', { agent_id: 'a', content: 'x', metadata: [1] }, 'metadata must be a JSON object'],
      ['/v1/memories', { agent_id: 'a', content: 'x', session_id: 'nope' }, 'session_id must be a UUID'],
      ['/v1/memories', { agent_id: 'a'.repeat(201), content: 'x' }, 'agent_id must be at most 200 characters long'],
      ['/v1/keys', { name: 'k', scopes: ['root'] }, 'scopes.0 must be one of "read", "write", "admin"'],
      ['/v1/keys', { name: 'k', scopes: [] }, 'scopes must name at least one scope'],
      [
        '/v1/agents/a/conversations/ingest',
        { messages: [{ role: 'user', content: 'hi', created_at: 'yesterday' }] },
        'messages.0.created_at must be an ISO-8601 time with an offset, such as 2026-01-31T09:30:00Z',
      ],
    ];
    for (const [path, body, detail] of cases) {
      const res = await api.http.post(path).set(t.auth).send(body);
      expectProblem(res, 400, 'invalid_request');
      expect(res.body.detail).toBe(detail);
    }
    const body = await api.http.post('/v1/memories').set(t.auth).send([1]);
    expect(body.body.detail).toBe('the body must be a JSON object');
    const bool = await recall({ include_superseded: 'yes' });
    expect(bool.body.detail).toBe('include_superseded must be one of "true", "false"');
  });
});

describe('unknown methods on known paths (issue 15 point 8)', () => {
  it('answers 405 with Allow as a problem, OPTIONS with the same Allow, and 404 for unknown paths', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const put = await api.http.put('/v1/memories').set(t.auth).send({});
    expectProblem(put, 405, 'method_not_allowed');
    expect(put.headers.allow).toBe('POST');
    expect(put.body.detail).toBe('/v1/memories does not answer PUT; it answers POST');
    const patch = await api.http.patch('/v1/anchors/abc').send({});
    expectProblem(patch, 405, 'method_not_allowed');
    expect(patch.headers.allow).toBe('GET, HEAD, DELETE');
    const post = await api.http.post('/healthz');
    expectProblem(post, 405, 'method_not_allowed');
    expect(post.headers.allow).toBe('GET, HEAD');
    const options = await api.http.options('/v1/keys');
    expect(options.status).toBe(204);
    expect(options.headers.allow).toBe('POST, GET, HEAD');
    expect((await api.http.head('/healthz')).status).toBe(200);
    expectProblem(await api.http.put('/v1/nothing-here'), 404, 'not_found');
  });
});
