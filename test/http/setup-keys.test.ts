import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../src/app.js';
import { engine, newKey, newTenant, SETUP_TOKEN, testApi, type TestApi } from '../helpers/harness.js';
import { expectProblem, UUID } from '../helpers/problem.js';

const setup = (api: TestApi, orgName: string, token: string | null = SETUP_TOKEN) =>
  api.http
    .post('/v1/setup')
    .set(token === null ? {} : { 'X-Setup-Token': token })
    .send({ org_name: orgName });

// The whole key view: no api_key and no hash, ever.
const KEY_VIEW_FIELDS = ['agent_ids', 'created_at', 'id', 'key_prefix', 'last_used_at', 'name', 'revoked_at', 'scopes'];

async function keyIdOf(api: TestApi, auth: { Authorization: string }, name: string): Promise<string> {
  const res = await api.http.get('/v1/keys').set(auth);
  expect(res.status).toBe(200);
  const key = (res.body.keys as { id: string; name: string }[]).find((k) => k.name === name);
  if (!key) throw new Error(`no key named ${name}`);
  return key.id;
}

describe(`POST /v1/setup on ${engine}`, () => {
  it('answers 403 setup_disabled when no setup token is configured', async () => {
    const api = await testApi({ config: { SETUP_TOKEN: '' } });
    expectProblem(await setup(api, `org-${randomUUID()}`), 403, 'setup_disabled');
  });

  it('answers 401 to a missing or wrong X-Setup-Token', async () => {
    const api = await testApi();
    expectProblem(await setup(api, `org-${randomUUID()}`, null), 401, 'unauthorized');
    expectProblem(await setup(api, `org-${randomUUID()}`, `${SETUP_TOKEN}x`), 401, 'unauthorized');
    const empty = await setup(api, `org-${randomUUID()}`, '');
    expectProblem(empty, 401, 'unauthorized');
    // Setup is authenticated by its own header, so no bearer challenge is offered.
    expect(empty.headers['www-authenticate']).toBeUndefined();
  });

  it('creates a tenant whose mk_ key holds read, write and admin', async () => {
    const api = await testApi();
    const res = await setup(api, `org-${randomUUID()}`);
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['api_key', 'message', 'tenant_id']);
    expect(res.body.tenant_id).toMatch(UUID);
    expect(res.body.api_key).toMatch(/^mk_[0-9A-Za-z]{40,}$/);
    expect(res.body.message).toEqual(expect.stringMatching(/\S/));

    const auth = { Authorization: `Bearer ${res.body.api_key}` };
    const keys = await api.http.get('/v1/keys').set(auth);
    expect(keys.status).toBe(200);
    expect(keys.body.keys).toHaveLength(1);
    expect(keys.body.keys[0]).toMatchObject({
      key_prefix: res.body.api_key.slice(0, 12),
      scopes: ['read', 'write', 'admin'],
      revoked_at: null,
    });
    expect((await api.http.get('/v1/anchors').set(auth)).status).toBe(200);
    expect((await api.http.post('/v1/anchors').set(auth).send({ anchor_external_id: 'x' })).status).toBe(201);
  });

  it('answers 409 conflict when the org_name is taken, whatever its case', async () => {
    const api = await testApi();
    const name = `Org-${randomUUID()}`;
    expect((await setup(api, name)).status).toBe(201);
    expectProblem(await setup(api, name), 409, 'conflict');
    // The code compares names case-insensitively (a unique index on lower(org_name)).
    expectProblem(await setup(api, name.toLowerCase()), 409, 'conflict');
  });

  it('answers 400 to an empty, blank, missing or over-long org_name', async () => {
    const api = await testApi();
    for (const body of [{ org_name: '' }, { org_name: '   ' }, {}, { org_name: 'x'.repeat(201) }]) {
      const res = await api.http.post('/v1/setup').set('X-Setup-Token', SETUP_TOKEN).send(body);
      expectProblem(res, 400, 'invalid_request');
      expect(res.body.errors[0].path).toBe('org_name');
    }
  });
});

describe(`POST /v1/keys on ${engine}`, () => {
  it('makes an rk_ key with read and write by default, shown once', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const res = await api.http.post('/v1/keys').set(t.auth).send({ name: 'worker' });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual([
      'agent_ids',
      'api_key',
      'created_at',
      'id',
      'key_prefix',
      'name',
      'scopes',
    ]);
    expect(res.body).toMatchObject({ name: 'worker', scopes: ['read', 'write'] });
    expect(res.body.api_key).toMatch(/^rk_[0-9A-Za-z]{40,}$/);
    expect(res.body.key_prefix).toBe(res.body.api_key.slice(0, 12));

    const auth = { Authorization: `Bearer ${res.body.api_key}` };
    expect((await api.http.get('/v1/anchors').set(auth)).status).toBe(200);
    expectProblem(await api.http.get('/v1/keys').set(auth), 403, 'insufficient_scope');
  });

  it('makes an mk_ key when admin is among the scopes', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const res = await api.http
      .post('/v1/keys')
      .set(t.auth)
      .send({ name: 'ops', scopes: ['admin'] });
    expect(res.status).toBe(201);
    expect(res.body.scopes).toEqual(['admin']);
    expect(res.body.api_key).toMatch(/^mk_[0-9A-Za-z]{40,}$/);
    const auth = { Authorization: `Bearer ${res.body.api_key}` };
    expect((await api.http.get('/v1/keys').set(auth)).status).toBe(200);
    expectProblem(await api.http.get('/v1/anchors').set(auth), 403, 'insufficient_scope');
  });

  it('rejects an unknown scope, an empty scope list and a missing name', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    for (const body of [{ name: 'k', scopes: ['root'] }, { name: 'k', scopes: [] }, { scopes: ['read'] }]) {
      expectProblem(await api.http.post('/v1/keys').set(t.auth).send(body), 400, 'invalid_request');
    }
  });
});

describe(`GET /v1/keys on ${engine}`, () => {
  it('lists keys by prefix, never the key itself or its hash', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const created = await api.http.post('/v1/keys').set(t.auth).send({ name: 'listed' });
    expect(created.status).toBe(201);
    const res = await api.http.get('/v1/keys').set(t.auth);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['keys']);
    expect(res.body.keys).toHaveLength(2);
    for (const key of res.body.keys) expect(Object.keys(key).sort()).toEqual(KEY_VIEW_FIELDS);
    expect(res.body.keys[1]).toMatchObject({ id: created.body.id, key_prefix: created.body.key_prefix });
    expect(res.text).not.toContain(created.body.api_key);
    expect(res.text).not.toContain(t.adminKey);
  });
});

describe(`DELETE /v1/keys/{id} on ${engine}`, () => {
  it('revokes a key, which gets 401 at once', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const key = await newKey(api, t, ['read']);
    expect((await api.http.get('/v1/anchors').set(key.auth)).status).toBe(200);

    const res = await api.http.delete(`/v1/keys/${key.id}`).set(t.auth);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const after = await api.http.get('/v1/anchors').set(key.auth);
    expectProblem(after, 401, 'unauthorized');
    expect(after.headers['www-authenticate']).toBe('Bearer');

    const listed = await api.http.get('/v1/keys').set(t.auth);
    const revoked = listed.body.keys.find((k: { id: string }) => k.id === key.id);
    expect(revoked.revoked_at).toEqual(expect.any(String));
  });

  it("refuses to revoke the tenant's last admin key", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const setupKeyId = await keyIdOf(api, t.auth, 'setup');
    await newKey(api, t, ['read', 'write']);
    expectProblem(await api.http.delete(`/v1/keys/${setupKeyId}`).set(t.auth), 409, 'conflict');
    expect((await api.http.get('/v1/keys').set(t.auth)).status).toBe(200);

    // With a second admin key the first may go, and then the second is the last one.
    const second = await newKey(api, t, ['admin']);
    expect((await api.http.delete(`/v1/keys/${setupKeyId}`).set(second.auth)).status).toBe(204);
    expectProblem(await api.http.get('/v1/keys').set(t.auth), 401, 'unauthorized');
    expectProblem(await api.http.delete(`/v1/keys/${second.id}`).set(second.auth), 409, 'conflict');
  });

  it('answers 404 for an unknown or malformed key id', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    expectProblem(await api.http.delete(`/v1/keys/${randomUUID()}`).set(t.auth), 404, 'not_found');
    expectProblem(await api.http.delete('/v1/keys/not-a-key').set(t.auth), 404, 'not_found');
  });
});

describe(`authentication on ${engine}`, () => {
  const wellFormedUnknown = `mk_${'A1b2C3d4E5'.repeat(4)}`;
  const cases: [string, Record<string, string>][] = [
    ['no Authorization header', {}],
    ['a garbage bearer token', { Authorization: 'Bearer garbage' }],
    ['a well-formed key that does not exist', { Authorization: `Bearer ${wellFormedUnknown}` }],
    ['another scheme', { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
    ['an empty bearer', { Authorization: 'Bearer ' }],
  ];

  it.each(cases)('answers 401 with WWW-Authenticate: Bearer to %s', async (_label, headers) => {
    const api = await testApi();
    const res = await api.http.get('/v1/anchors').set(headers);
    expectProblem(res, 401, 'unauthorized');
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });
});

/** docs/api.md §1, route by route. */
const SCOPE_TABLE: {
  method: 'get' | 'post' | 'patch' | 'delete';
  path: string;
  access: 'any' | 'read' | 'write' | 'admin';
}[] = [
  { method: 'get', path: '/v1/canon', access: 'any' },
  { method: 'get', path: '/v1/jobs', access: 'read' },
  { method: 'get', path: '/v1/jobs/{id}', access: 'read' },
  { method: 'get', path: '/v1/canon/{id}', access: 'any' },
  { method: 'get', path: '/v1/keys/current', access: 'any' },
  { method: 'get', path: '/v1/memories/recall', access: 'read' },
  { method: 'post', path: '/v1/memories/recall', access: 'read' },
  { method: 'get', path: '/v1/memories/{id}', access: 'read' },
  { method: 'get', path: '/v1/memories/{id}/history', access: 'read' },
  { method: 'get', path: '/v1/anchors', access: 'read' },
  { method: 'get', path: '/v1/anchors/{id}', access: 'read' },
  { method: 'get', path: '/v1/anchors/{id}/memories', access: 'read' },
  { method: 'get', path: '/v1/anchors/{id}/sessions', access: 'read' },
  { method: 'get', path: '/v1/sessions/{id}', access: 'read' },
  { method: 'get', path: '/v1/anchors/{id}/export', access: 'read' },
  { method: 'get', path: '/v1/sessions/{id}/memories', access: 'read' },
  { method: 'post', path: '/v1/memories', access: 'write' },
  { method: 'post', path: '/v1/memories/batch', access: 'write' },
  { method: 'post', path: '/v1/agents/{id}/conversations/ingest', access: 'write' },
  { method: 'patch', path: '/v1/memories/{id}', access: 'write' },
  { method: 'delete', path: '/v1/memories/{id}', access: 'write' },
  { method: 'post', path: '/v1/anchors', access: 'write' },
  { method: 'post', path: '/v1/sessions', access: 'write' },
  { method: 'post', path: '/v1/sessions/{id}/end', access: 'write' },
  { method: 'post', path: '/v1/canon', access: 'admin' },
  { method: 'delete', path: '/v1/canon/{id}', access: 'admin' },
  { method: 'delete', path: '/v1/anchors/{id}', access: 'admin' },
  { method: 'post', path: '/v1/keys', access: 'admin' },
  { method: 'get', path: '/v1/keys', access: 'admin' },
  { method: 'delete', path: '/v1/keys/{id}', access: 'admin' },
  { method: 'get', path: '/v1/audit', access: 'admin' },
  { method: 'get', path: '/v1/export', access: 'admin' },
  { method: 'post', path: '/v1/import', access: 'admin' },
  { method: 'post', path: '/v1/webhooks', access: 'admin' },
  { method: 'get', path: '/v1/webhooks', access: 'admin' },
  { method: 'get', path: '/v1/webhooks/{id}', access: 'admin' },
  { method: 'patch', path: '/v1/webhooks/{id}', access: 'admin' },
  { method: 'delete', path: '/v1/webhooks/{id}', access: 'admin' },
  { method: 'get', path: '/v1/webhooks/{id}/deliveries', access: 'admin' },
];

/** A key with every scope but the one the route needs. */
const LACKING: Record<'read' | 'write' | 'admin', string[]> = {
  read: ['write', 'admin'],
  write: ['read', 'admin'],
  admin: ['read', 'write'],
};

describe(`scopes on ${engine}`, () => {
  it('the route table gives every keyed route the access of docs/api.md §1', () => {
    const keyed = API_ROUTES.filter((r) => r.access !== 'setup').map((r) => `${r.access} ${r.method} ${r.path}`);
    expect(keyed.sort()).toEqual(SCOPE_TABLE.map((r) => `${r.access} ${r.method} ${r.path}`).sort());
  });

  it('answers 403 insufficient_scope on every route to a key without its scope', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const keys = {
      read: await newKey(api, t, LACKING.read),
      write: await newKey(api, t, LACKING.write),
      admin: await newKey(api, t, LACKING.admin),
    };
    for (const r of SCOPE_TABLE) {
      if (r.access === 'any') continue;
      const path = r.path.replace('{id}', randomUUID());
      const req = api.http[r.method](path).set(keys[r.access].auth);
      const res = r.method === 'post' || r.method === 'patch' ? await req.send({}) : await req;
      expect({ route: `${r.method} ${r.path}`, status: res.status, code: res.body.code }).toEqual({
        route: `${r.method} ${r.path}`,
        status: 403,
        code: 'insufficient_scope',
      });
    }
  });

  it('lets a key of any single scope read canon', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const entry = await api.http
      .post('/v1/canon')
      .set(t.auth)
      .send({ agent_id: 'a1', content: 'We answer in English.' });
    expect(entry.status).toBe(201);
    for (const scope of ['read', 'write', 'admin']) {
      const key = await newKey(api, t, [scope]);
      const list = await api.http.get('/v1/canon').set(key.auth);
      expect(list.status).toBe(200);
      expect(list.body.canon.map((c: { id: string }) => c.id)).toEqual([entry.body.id]);
      expect((await api.http.get(`/v1/canon/${entry.body.id}`).set(key.auth)).status).toBe(200);
    }
  });
});
