import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { engine, manualClock, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { expectProblem, MEMORY_FIELDS, UUID } from '../helpers/problem.js';

const DAY_MS = 86_400_000;

const store = (api: TestApi, t: Tenant, body: Record<string, unknown>) =>
  api.http
    .post('/v1/memories')
    .set(t.auth)
    .send({ agent_id: 'a1', ...body });

async function startSession(api: TestApi, t: Tenant, body: Record<string, unknown> = {}): Promise<string> {
  const res = await api.http
    .post('/v1/sessions')
    .set(t.auth)
    .send({ agent_id: 'a1', ...body });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function createAnchor(api: TestApi, t: Tenant, externalId: string): Promise<string> {
  const res = await api.http.post('/v1/anchors').set(t.auth).send({ anchor_external_id: externalId });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

describe(`POST /v1/memories: bindings of docs/api.md §4 on ${engine}`, () => {
  it('stores a private memory when neither anchor nor session is named', async () => {
    const clock = manualClock();
    const api = await testApi({ clock });
    const t = await newTenant(api);
    const res = await store(api, t, { content: '  The user likes green tea  ' });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual([...MEMORY_FIELDS, 'outcome'].sort());
    const at = clock().toISOString();
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      agent_id: 'a1',
      // The code stores the content trimmed.
      content: 'The user likes green tea',
      binding: 'private',
      anchor_id: null,
      anchor_external_id: null,
      session_id: null,
      status: 'active',
      confidence: 0.7,
      effective_confidence: 0.7,
      reinforcement_count: 0,
      superseded_by: null,
      superseded_at: null,
      metadata: {},
      occurred_at: at,
      created_at: at,
      updated_at: at,
      last_reinforced_at: at,
      expires_at: null,
      pinned: false,
      outcome: 'created',
    });
  });

  it('anchors by anchor_external_id and creates that anchor', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const res = await store(api, t, { content: 'Alice prefers email', anchor_external_id: 'alice' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ binding: 'anchored', anchor_external_id: 'alice', session_id: null });
    const anchors = await api.http.get('/v1/anchors').set(t.auth).query({ anchor_external_id: 'alice' });
    expect(anchors.body.anchors.map((a: { id: string }) => a.id)).toEqual([res.body.anchor_id]);
  });

  it('anchors by anchor_id', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const anchorId = await createAnchor(api, t, 'bob');
    const res = await store(api, t, { content: 'Bob lives in Lyon', anchor_id: anchorId });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ binding: 'anchored', anchor_id: anchorId, anchor_external_id: 'bob' });
  });

  it('keeps session_id as provenance when an anchor and a session are both named', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const plain = await startSession(api, t);
    const res = await store(api, t, { content: 'Carol is vegetarian', anchor_external_id: 'carol', session_id: plain });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ binding: 'anchored', anchor_external_id: 'carol', session_id: plain });

    const aboutCarol = await startSession(api, t, { anchor_id: res.body.anchor_id });
    const again = await store(api, t, {
      content: 'Carol has a cat',
      anchor_id: res.body.anchor_id,
      session_id: aboutCarol,
    });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ binding: 'anchored', anchor_id: res.body.anchor_id, session_id: aboutCarol });
  });

  it("binds to the session, and to the session's anchor, when only session_id is named", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const aboutDan = await startSession(api, t, { anchor_external_id: 'dan' });
    const res = await store(api, t, { content: 'Dan asked about invoices', session_id: aboutDan });
    expect(res.status).toBe(201);
    const danId = (await api.http.get(`/v1/sessions/${aboutDan}`).set(t.auth)).body.anchor_id;
    expect(danId).toMatch(UUID);
    expect(res.body).toMatchObject({
      binding: 'session',
      session_id: aboutDan,
      anchor_id: danId,
      anchor_external_id: 'dan',
    });

    const plain = await startSession(api, t);
    const loose = await store(api, t, { content: 'The user is in a hurry', session_id: plain });
    expect(loose.body).toMatchObject({ binding: 'session', session_id: plain, anchor_id: null });
  });

  it('answers 404 for an unknown anchor_id or session_id', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    expectProblem(await store(api, t, { content: 'x', anchor_id: randomUUID() }), 404, 'not_found');
    expectProblem(await store(api, t, { content: 'x', session_id: randomUUID() }), 404, 'not_found');
  });

  it('answers 409 when anchor_id and anchor_external_id name different anchors, creating nothing', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const eveId = await createAnchor(api, t, 'eve');
    await createAnchor(api, t, 'frank');
    expectProblem(
      await store(api, t, { content: 'x', anchor_id: eveId, anchor_external_id: 'frank' }),
      409,
      'conflict',
    );
    // An external id that does not exist yet names a different anchor too; the refused store keeps it unborn.
    expectProblem(await store(api, t, { content: 'x', anchor_id: eveId, anchor_external_id: 'gina' }), 409, 'conflict');
    const gina = await api.http.get('/v1/anchors').set(t.auth).query({ anchor_external_id: 'gina' });
    expect(gina.body.anchors).toEqual([]);
  });

  it('keeps metadata as sent', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const metadata = { source: 'crm', tags: ['a', 'b'], nested: { n: 1.5, ok: true, none: null }, 'ü key': 'ß' };
    const res = await store(api, t, { content: 'Metadata round trip', metadata });
    expect(res.status).toBe(201);
    expect(res.body.metadata).toEqual(metadata);
    expect((await api.http.get(`/v1/memories/${res.body.id}`).set(t.auth)).body.metadata).toEqual(metadata);
  });

  it('answers every store with the memory as a read finds it, however its place was named', async () => {
    // A clock that stands still, so that the effective confidence of the answer and the read agree.
    const api = await testApi({ clock: manualClock() });
    const t = await newTenant(api);
    const anchorId = await createAnchor(api, t, 'ida');
    const subjectSession = await startSession(api, t, { anchor_external_id: 'ida' });
    const loneSession = await startSession(api, t);
    // Keys in an order jsonb does not keep: the answer must carry the stored order, as a read does.
    const metadata = { zeta: 1, a: { yy: [1, 2.5], b: null } };
    const places: Record<string, unknown>[] = [
      {},
      { anchor_external_id: 'ida' },
      { anchor_id: anchorId },
      { anchor_external_id: 'ida', session_id: subjectSession },
      { session_id: subjectSession },
      { session_id: loneSession },
      { anchor_external_id: 'noor' },
    ];
    for (const [i, place] of places.entries()) {
      const content = `Fact number ${i} about the place it was stored in`;
      // Created, then reinforced: the third reinforcement of a subject's session memory promotes it.
      const promotes = place.session_id === subjectSession && place.anchor_external_id === undefined;
      for (const outcome of ['created', 'reinforced', 'reinforced', promotes ? 'promoted' : 'reinforced']) {
        const res = await store(api, t, { content, metadata, ...place });
        expect(res.body.outcome, JSON.stringify(place)).toBe(outcome);
        await expectAnswerAsRead(res.body, JSON.stringify(place));
      }
    }
    // A session copy of a fact the profile holds too merges into the profile's on its next store.
    const merging = { content: 'A fact both in the session and in the profile', metadata };
    expect((await store(api, t, { ...merging, session_id: subjectSession })).body.outcome).toBe('created');
    expect((await store(api, t, { ...merging, anchor_external_id: 'ida' })).body.outcome).toBe('created');
    const merged = await store(api, t, { ...merging, session_id: subjectSession });
    expect(merged.body).toMatchObject({ outcome: 'reinforced', binding: 'anchored', reinforcement_count: 2 });
    await expectAnswerAsRead(merged.body, 'merged');

    async function expectAnswerAsRead(body: Record<string, unknown>, what: string): Promise<void> {
      const { outcome: _, ...answered } = body;
      const read = await api.http.get(`/v1/memories/${String(answered.id)}`).set(t.auth);
      expect(JSON.stringify(answered), what).toBe(JSON.stringify(read.body));
    }
  });

  it('answers 409 session_ended for a store into an ended session, with or without an anchor', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const session = await startSession(api, t, { anchor_external_id: 'hal' });
    expect((await api.http.post(`/v1/sessions/${session}/end`).set(t.auth)).status).toBe(200);
    expectProblem(await store(api, t, { content: 'late', session_id: session }), 409, 'session_ended');
    expectProblem(
      await store(api, t, { content: 'late', session_id: session, anchor_external_id: 'hal' }),
      409,
      'session_ended',
    );
  });
});

describe(`GET and DELETE /v1/memories/{id} on ${engine}`, () => {
  it('returns the memory; a delete answers 204 and then the memory is gone', async () => {
    const api = await testApi({ clock: manualClock() });
    const t = await newTenant(api);
    const stored = await store(api, t, { content: 'Ivan speaks Russian', anchor_external_id: 'ivan' });
    const { outcome, ...memory } = stored.body;
    expect(outcome).toBe('created');

    const got = await api.http.get(`/v1/memories/${memory.id}`).set(t.auth);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(memory);

    const deleted = await api.http.delete(`/v1/memories/${memory.id}`).set(t.auth);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectProblem(await api.http.get(`/v1/memories/${memory.id}`).set(t.auth), 404, 'not_found');
    expectProblem(await api.http.delete(`/v1/memories/${memory.id}`).set(t.auth), 404, 'not_found');
  });

  it('answers 404 for ids that are not UUIDs, on every route with an id', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const paths: ['get' | 'post' | 'delete', string][] = [
      ['get', '/v1/memories/not-a-uuid'],
      ['get', '/v1/memories/not-a-uuid/history'],
      ['delete', '/v1/memories/not-a-uuid'],
      ['get', '/v1/anchors/123'],
      ['get', '/v1/anchors/123/memories'],
      ['get', '/v1/sessions/%20'],
      ['post', '/v1/sessions/zzz/end'],
      ['get', '/v1/canon/zzz'],
      ['delete', '/v1/canon/zzz'],
      ['delete', '/v1/keys/zzz'],
    ];
    for (const [method, path] of paths) {
      const res = await api.http[method](path).set(t.auth);
      expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status: 404, code: 'not_found' });
    }
  });

  it('answers 400 to a path with a broken percent-escape', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    expectProblem(await api.http.get('/v1/memories/%ZZ').set(t.auth), 400, 'invalid_request');
  });
});

describe(`GET /v1/memories/{id}/history on ${engine}`, () => {
  it('lists events oldest first, and still answers after the memory is deleted', async () => {
    const clock = manualClock();
    const api = await testApi({ clock });
    const t = await newTenant(api);
    const keyId = (await api.http.get('/v1/keys').set(t.auth)).body.keys[0].id;
    const memory = (await store(api, t, { content: 'Judy is allergic to nuts', anchor_external_id: 'judy' })).body;
    const createdAt = clock().toISOString();

    const before = await api.http.get(`/v1/memories/${memory.id}/history`).set(t.auth);
    expect(before.status).toBe(200);
    expect(before.body.events).toEqual([
      {
        id: expect.stringMatching(UUID),
        at: createdAt,
        action: 'created',
        memory_id: memory.id,
        anchor_id: memory.anchor_id,
        session_id: null,
        actor: { key_id: keyId, agent_id: 'a1' },
        changes: expect.any(Object),
      },
    ]);

    clock.advance(DAY_MS);
    expect((await api.http.delete(`/v1/memories/${memory.id}`).set(t.auth)).status).toBe(204);
    const after = await api.http.get(`/v1/memories/${memory.id}/history`).set(t.auth);
    expect(after.status).toBe(200);
    expect(after.body.events.map((e: { action: string }) => e.action)).toEqual(['created', 'deleted']);
    expect(after.body.events[1].at).toBe(clock().toISOString());
    expect(after.text).not.toContain('allergic');
  });

  it('answers 404 for a memory that never existed', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    expectProblem(await api.http.get(`/v1/memories/${randomUUID()}/history`).set(t.auth), 404, 'not_found');
  });
});

describe(`request validation on ${engine}`, () => {
  it('answers empty or blank content with a 400 problem naming the field', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    for (const content of ['', ' \n\t ']) {
      const res = await store(api, t, { content });
      expectProblem(res, 400, 'invalid_request');
      expect(Object.keys(res.body).sort()).toEqual(['code', 'detail', 'errors', 'status', 'title', 'type']);
      expect(res.body.errors).toEqual([{ path: 'content', message: 'must not be empty' }]);
      expect(res.body.detail).toContain('content');
    }
    const missing = await api.http.post('/v1/memories').set(t.auth).send({ content: 'no agent' });
    expectProblem(missing, 400, 'invalid_request');
    expect(missing.body.errors.map((e: { path: string }) => e.path)).toEqual(['agent_id']);
  });

  it('answers 413 to content over 8,000 characters and stores 8,000 exactly', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const over = await store(api, t, { content: 'x'.repeat(8001) });
    expectProblem(over, 413, 'payload_too_large');
    expect(over.body.errors).toEqual([{ path: 'content', message: expect.any(String) }]);
    expect((await store(api, t, { content: 'y'.repeat(8000) })).status).toBe(201);
    // Characters, not UTF-16 units: 8,000 emoji are 16,000 units and still within the limit.
    expect((await store(api, t, { content: '😀'.repeat(8000) })).status).toBe(201);
  });

  it('answers 413 to a body over 1 MiB', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const res = await store(api, t, { content: 'z', metadata: { blob: 'b'.repeat(1024 * 1024) } });
    expectProblem(res, 413, 'payload_too_large');
  });

  it('answers 400 to malformed JSON and 415 to a body that is not JSON', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const malformed = await api.http
      .post('/v1/memories')
      .set(t.auth)
      .set('Content-Type', 'application/json')
      .send('{"agent_id": "a1", "content": ');
    expectProblem(malformed, 400, 'invalid_request');
    const plain = await api.http.post('/v1/memories').set(t.auth).set('Content-Type', 'text/plain').send('remember me');
    expectProblem(plain, 415, 'unsupported_media_type');
  });

  it('answers 400 to input Postgres cannot store: U+0000 or deeply nested metadata', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    let deep: unknown = 'leaf';
    for (let i = 0; i < 40; i++) deep = [deep];
    const bodies = [
      { content: 'nul \u0000 inside' },
      { content: 'ok', metadata: { note: 'nul \u0000' } },
      { content: 'ok', anchor_external_id: 'a\u0000b' },
      { content: 'ok', metadata: { deep } },
      { content: 'ok', metadata: ['not', 'an', 'object'] },
    ];
    for (const body of bodies) {
      const res = await store(api, t, body);
      expect({ body, status: res.status, code: res.body.code }).toEqual({ body, status: 400, code: 'invalid_request' });
    }
  });

  it('answers 400 to recall without agent_id or query, or with a bad limit or flag', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const cases: [Record<string, string>, string][] = [
      [{ query: 'tea' }, 'agent_id'],
      [{ agent_id: 'a1' }, 'query'],
      [{ agent_id: 'a1', query: '   ' }, 'query'],
      [{ agent_id: 'a1', query: 'tea', limit: '0' }, 'limit'],
      [{ agent_id: 'a1', query: 'tea', limit: '101' }, 'limit'],
      [{ agent_id: 'a1', query: 'tea', limit: 'ten' }, 'limit'],
      [{ agent_id: 'a1', query: 'tea', include_superseded: 'maybe' }, 'include_superseded'],
    ];
    for (const [query, field] of cases) {
      const res = await api.http.get('/v1/memories/recall').set(t.auth).query(query);
      expectProblem(res, 400, 'invalid_request');
      expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual([field]);
    }
  });
});
