import { describe, expect, it } from 'vitest';
import { call, identityWithScopes, inProcessClient, text } from '../helpers/mcp.js';
import { newTenant, testApi } from '../helpers/harness.js';
import { expectProblem } from '../helpers/problem.js';

/** Issue 15 point 5: a misspelt field is refused with 400 naming it, never dropped (docs/api.md §2). */
describe('unknown fields', () => {
  it('refuses the misspelt subject that used to store an unscoped private memory', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const res = await api.http
      .post('/v1/memories')
      .set(t.auth)
      .send({ agent_id: 'a', content: 'Prefers email', anchor_externalid: 'customer-77' });
    expectProblem(res, 400, 'invalid_request');
    expect(res.body.errors).toEqual([
      { path: 'anchor_externalid', message: 'is not a known field; did you mean "anchor_external_id"?' },
    ]);
    expect(res.body.detail).toBe('anchor_externalid is not a known field; did you mean "anchor_external_id"?');
    // Nothing was stored.
    const recall = await api.http.get('/v1/memories/recall').set(t.auth).query({ agent_id: 'a', query: 'email' });
    expect(recall.body.results).toEqual([]);
  });

  it('names every unknown field of every body, nested ones by their path', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const cases: [string, Record<string, unknown>, string][] = [
      ['/v1/memories', { agent_id: 'a', content: 'x', colour: 'red' }, 'colour'],
      ['/v1/anchors', { anchor_external_id: 'c-1', nmae: 'Ann' }, 'nmae'],
      ['/v1/sessions', { agent_id: 'a', ttl: 5 }, 'ttl'],
      ['/v1/canon', { agent_id: 'a', content: 'rule', priority: 1 }, 'priority'],
      ['/v1/keys', { name: 'k', scope: ['read'] }, 'scope'],
      [
        '/v1/agents/a/conversations/ingest',
        { messages: [{ role: 'user', content: 'hi', text: 'x' }] },
        'messages.0.text',
      ],
      [
        '/v1/agents/a/conversations/ingest',
        { messages: [{ role: 'user', content: 'hi' }], sesion_id: 'x' },
        'sesion_id',
      ],
    ];
    for (const [path, body, field] of cases) {
      const res = await api.http.post(path).set(t.auth).send(body);
      expectProblem(res, 400, 'invalid_request');
      expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual([field]);
      expect(res.body.detail).toContain(`${field} is not a known field`);
    }
    const setup = await api.http.post('/v1/setup').set('X-Setup-Token', 'wrong').send({ org_name: 'x', extra: 1 });
    // The token is checked first: an unknown caller learns nothing of the body's shape.
    expect(setup.status).toBe(401);
  });

  it('refuses unknown query parameters, on routes with a query and routes without one, and keeps the real ones', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const typo = await api.http
      .get('/v1/memories/recall')
      .set(t.auth)
      .query({ agent_id: 'a', query: 'x', anchor_externalid: 'customer-77' });
    expectProblem(typo, 400, 'invalid_request');
    expect(typo.body.errors).toEqual([
      { path: 'anchor_externalid', message: 'is not a known field; did you mean "anchor_external_id"?' },
    ]);
    const legit = await api.http
      .get('/v1/memories/recall')
      .set(t.auth)
      .query({ agent_id: 'a', query: 'x', limit: 5, include_superseded: 'true', anchor_external_id: 'c-1' });
    expect(legit.status).toBe(200);
    const keys = await api.http.get('/v1/keys').set(t.auth).query({ verbose: 1 });
    expectProblem(keys, 400, 'invalid_request');
    expect(keys.body.errors).toEqual([{ path: 'verbose', message: 'is not a known field' }]);
    expect((await api.http.get('/v1/anchors').set(t.auth).query({ limit: 2 })).status).toBe(200);
  });

  it('refuses a body on a route that takes none, and accepts an empty one', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const session = await api.http.post('/v1/sessions').set(t.auth).send({ agent_id: 'a' });
    const end = `/v1/sessions/${session.body.id as string}/end`;
    const refused = await api.http.post(end).set(t.auth).send({ reason: 'done' });
    expectProblem(refused, 400, 'invalid_request');
    expect(refused.body.errors).toEqual([{ path: 'body', message: 'must be empty' }]);
    expect((await api.http.post(end).set(t.auth).send({})).status).toBe(200);
  });

  it('gives every MCP tool an error result naming an unknown argument', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const identity = await identityWithScopes(api, t, ['read', 'write', 'admin']);
    const { client, close } = await inProcessClient(api.core, identity);
    const { tools } = await client.listTools();
    for (const tool of tools) expect(tool.inputSchema.additionalProperties).toBe(false);
    const cases: [string, Record<string, unknown>, string][] = [
      [
        'remember',
        { content: 'Prefers email', subjct: 'customer-77' },
        '"subjct" is not a known field; did you mean "subject"?',
      ],
      ['recall', { query: 'email', subject: 'c', limt: 3 }, '"limt" is not a known field; did you mean "limit"?'],
      ['start_session', { subject: 'c', ttl: 3 }, '"ttl" is not a known field'],
      [
        'end_session',
        { session_id: '00000000-0000-4000-8000-000000000000', force: true },
        '"force" is not a known field',
      ],
      ['write_canon', { content: 'rule', priority: 1 }, '"priority" is not a known field'],
      ['purge_subject', { subject: 'c', confirm: true, dry_run: true }, '"dry_run" is not a known field'],
      [
        'correct',
        { memory_id: '00000000-0000-4000-8000-000000000000', content: 'x', contnt: 'y' },
        '"contnt" is not a known field; did you mean "content"?',
      ],
    ];
    for (const [name, args, message] of cases) {
      const result = await call(client, name, args);
      expect(result.isError, name).toBe(true);
      expect(text(result), name).toContain(message);
    }
    // Nothing was stored under no subject by the misspelt remember.
    const recall = await call(client, 'recall', { query: 'email' });
    expect(recall.structuredContent).toEqual({ results: [] });
    await close();
  });
});
