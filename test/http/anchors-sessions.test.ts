import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/domain/records/pagination.js';
import { engine, manualClock, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { expectProblem, UUID } from '../helpers/problem.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

const store = (api: TestApi, t: Tenant, body: Record<string, unknown>) =>
  api.http
    .post('/v1/memories')
    .set(t.auth)
    .send({ agent_id: 'a1', ...body });

const ids = (items: { id: string }[]): string[] => items.map((i) => i.id);

/** Forged cursors: not base64 JSON, the wrong shape, a UUID-shaped non-UUID, a year Postgres refuses. */
const FORGED_TIME_ID_CURSORS = [
  'not-a-cursor!',
  encodeCursor([1]),
  encodeCursor(['2026-01-01T00:00:00.000Z', '-'.repeat(36)]),
  encodeCursor(['-200000-01-01T00:00:00.000Z', randomUUID()]),
  encodeCursor(['yesterday', randomUUID()]),
];

describe(`POST /v1/anchors on ${engine}`, () => {
  it('creates an anchor, then answers 200 with the same anchor for the same external id', async () => {
    const clock = manualClock();
    const api = await testApi({ clock });
    const t = await newTenant(api);
    const first = await api.http
      .post('/v1/anchors')
      .set(t.auth)
      .send({ anchor_external_id: 'cust-1', name: 'Ada', metadata: { tier: 'gold' } });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(UUID),
      anchor_external_id: 'cust-1',
      name: 'Ada',
      metadata: { tier: 'gold' },
      created_at: clock().toISOString(),
      memory_count: 0,
      last_activity_at: null,
    });

    clock.advance(HOUR_MS);
    const again = await api.http
      .post('/v1/anchors')
      .set(t.auth)
      .send({ anchor_external_id: 'cust-1', name: 'Other', metadata: { tier: 'none' } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
  });

  it('answers 400 to a missing or blank anchor_external_id', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    for (const body of [{}, { anchor_external_id: '  ' }, { anchor_external_id: 'x'.repeat(257) }]) {
      expectProblem(await api.http.post('/v1/anchors').set(t.auth).send(body), 400, 'invalid_request');
    }
  });
});

describe(`GET /v1/anchors on ${engine}`, () => {
  it('filters by anchor_external_id', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const a = await api.http.post('/v1/anchors').set(t.auth).send({ anchor_external_id: 'p-1' });
    await api.http.post('/v1/anchors').set(t.auth).send({ anchor_external_id: 'p-2' });
    const one = await api.http.get('/v1/anchors').set(t.auth).query({ anchor_external_id: 'p-1' });
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ anchors: [a.body], next_cursor: null });
    const none = await api.http.get('/v1/anchors').set(t.auth).query({ anchor_external_id: 'p-3' });
    expect(none.body).toEqual({ anchors: [], next_cursor: null });
  });

  it('pages with limit and cursor, oldest first, until next_cursor is null', async () => {
    const clock = manualClock();
    const api = await testApi({ clock });
    const t = await newTenant(api);
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      created.push(
        (
          await api.http
            .post('/v1/anchors')
            .set(t.auth)
            .send({ anchor_external_id: `s-${i}` })
        ).body.id,
      );
      clock.advance(1000);
    }
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const res = await api.http
        .get('/v1/anchors')
        .set(t.auth)
        .query({ limit: 2, ...(cursor ? { cursor } : {}) });
      expect(res.status).toBe(200);
      pages.push(ids(res.body.anchors));
      cursor = res.body.next_cursor;
    } while (cursor !== null && pages.length < 10);
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    // Disjoint pages that together hold every anchor, in creation order (the code's choice).
    expect(pages.flat()).toEqual(created);
  });

  it('answers 400 to a forged cursor or a limit out of range', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    for (const cursor of FORGED_TIME_ID_CURSORS) {
      const res = await api.http.get('/v1/anchors').set(t.auth).query({ cursor });
      expectProblem(res, 400, 'invalid_request');
      expect(res.body.errors[0].path).toBe('cursor');
    }
    for (const limit of ['0', '201', '1.5']) {
      expectProblem(await api.http.get('/v1/anchors').set(t.auth).query({ limit }), 400, 'invalid_request');
    }
  });
});

describe(`GET /v1/anchors/{id} on ${engine}`, () => {
  it("counts what the anchor's profile lists: active anchored memories, not its sessions' ones", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const kept = await store(api, t, { content: 'Kim likes jazz', anchor_external_id: 'kim' });
    const anchorId = kept.body.anchor_id;
    const gone = await store(api, t, { content: 'Kim owns a boat', anchor_id: anchorId });
    const session = await api.http.post('/v1/sessions').set(t.auth).send({ agent_id: 'a1', anchor_id: anchorId });
    expect((await store(api, t, { content: 'Kim is calling now', session_id: session.body.id })).status).toBe(201);
    await store(api, t, { content: 'Lee likes rock', anchor_external_id: 'lee' });
    await store(api, t, { content: 'a private note' });
    expect((await api.http.delete(`/v1/memories/${gone.body.id}`).set(t.auth)).status).toBe(204);

    const res = await api.http.get(`/v1/anchors/${anchorId}`).set(t.auth);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: anchorId, anchor_external_id: 'kim', name: null, metadata: {} });
    // Kim likes jazz; not the deleted boat, not the session's call, not Lee's or the private note.
    expect(res.body.memory_count).toBe(1);
    const profile = await api.http.get(`/v1/anchors/${anchorId}/memories`).set(t.auth);
    expect(profile.body.memories).toHaveLength(res.body.memory_count);
    const listed = await api.http.get('/v1/anchors').set(t.auth).query({ anchor_external_id: 'kim' });
    expect(listed.body.anchors[0].memory_count).toBe(1);
  });

  it('answers 404 for an unknown anchor', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    expectProblem(await api.http.get(`/v1/anchors/${randomUUID()}`).set(t.auth), 404, 'not_found');
    expectProblem(await api.http.get(`/v1/anchors/${randomUUID()}/memories`).set(t.auth), 404, 'not_found');
  });
});

describe(`GET /v1/anchors/{id}/memories on ${engine}`, () => {
  it("lists only the anchor's active anchored memories, highest effective confidence first, in pages", async () => {
    const clock = manualClock();
    const api = await testApi({ clock });
    const t = await newTenant(api);
    const profile: string[] = [];
    let anchorId = '';
    for (const fact of ['Mia was born in 1990', 'Mia works as a nurse', 'Mia moved to Oslo']) {
      const res = await store(api, t, { content: fact, anchor_external_id: 'mia' });
      expect(res.status).toBe(201);
      anchorId = res.body.anchor_id;
      profile.unshift(res.body.id);
      // Older memories have decayed further, so the newest ranks first.
      clock.advance(DAY_MS);
    }
    const session = await api.http.post('/v1/sessions').set(t.auth).send({ agent_id: 'a1', anchor_id: anchorId });
    await store(api, t, { content: 'Mia sounds tired today', session_id: session.body.id });
    await store(api, t, { content: 'Noah was born in 1985', anchor_external_id: 'noah' });
    await store(api, t, { content: 'Mia is a private thought' });

    const first = await api.http.get(`/v1/anchors/${anchorId}/memories`).set(t.auth).query({ limit: 2 });
    expect(first.status).toBe(200);
    expect(first.body.anchor).toMatchObject({ id: anchorId, anchor_external_id: 'mia' });
    expect(ids(first.body.memories)).toEqual(profile.slice(0, 2));
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await api.http
      .get(`/v1/anchors/${anchorId}/memories`)
      .set(t.auth)
      .query({ limit: 2, cursor: first.body.next_cursor });
    expect(ids(second.body.memories)).toEqual(profile.slice(2));
    expect(second.body.next_cursor).toBeNull();

    const all = [...first.body.memories, ...second.body.memories];
    expect(all.every((m) => m.binding === 'anchored' && m.status === 'active' && m.anchor_id === anchorId)).toBe(true);
    const confidences = all.map((m) => m.effective_confidence as number);
    expect(confidences).toEqual([...confidences].sort((a, b) => b - a));
    expect(confidences[0]).toBeGreaterThan(confidences[2] ?? 1);
  });

  it('answers 400 to a forged cursor', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const anchorId = (await api.http.post('/v1/anchors').set(t.auth).send({ anchor_external_id: 'o' })).body.id;
    for (const cursor of ['###', encodeCursor([-1]), encodeCursor([1.5]), encodeCursor([1e20]), encodeCursor(['2'])]) {
      const res = await api.http.get(`/v1/anchors/${anchorId}/memories`).set(t.auth).query({ cursor });
      expect({ cursor, status: res.status, code: res.body.code }).toEqual({
        cursor,
        status: 400,
        code: 'invalid_request',
      });
    }
  });
});

describe(`sessions on ${engine}`, () => {
  it('starts a session without a subject and reads it back', async () => {
    const clock = manualClock();
    const api = await testApi({ clock });
    const t = await newTenant(api);
    const res = await api.http
      .post('/v1/sessions')
      .set(t.auth)
      .send({ agent_id: 'a1', metadata: { channel: 'chat' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      agent_id: 'a1',
      anchor_id: null,
      anchor_external_id: null,
      status: 'active',
      started_at: clock().toISOString(),
      ended_at: null,
      expires_at: null,
      metadata: { channel: 'chat' },
    });
    const got = await api.http.get(`/v1/sessions/${res.body.id}`).set(t.auth);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it('starts a session about a subject, creating the anchor or naming it by id', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const byExternal = await api.http
      .post('/v1/sessions')
      .set(t.auth)
      .send({ agent_id: 'a1', anchor_external_id: 'pat' });
    expect(byExternal.status).toBe(201);
    expect(byExternal.body).toMatchObject({ anchor_id: expect.stringMatching(UUID), anchor_external_id: 'pat' });
    const anchors = await api.http.get('/v1/anchors').set(t.auth).query({ anchor_external_id: 'pat' });
    expect(ids(anchors.body.anchors)).toEqual([byExternal.body.anchor_id]);

    const byId = await api.http
      .post('/v1/sessions')
      .set(t.auth)
      .send({ agent_id: 'a1', anchor_id: byExternal.body.anchor_id });
    expect(byId.status).toBe(201);
    expect(byId.body).toMatchObject({ anchor_id: byExternal.body.anchor_id, anchor_external_id: 'pat' });

    const unknown = await api.http.post('/v1/sessions').set(t.auth).send({ agent_id: 'a1', anchor_id: randomUUID() });
    expectProblem(unknown, 404, 'not_found');
    expectProblem(await api.http.get(`/v1/sessions/${randomUUID()}`).set(t.auth), 404, 'not_found');
    expectProblem(await api.http.post(`/v1/sessions/${randomUUID()}/end`).set(t.auth), 404, 'not_found');
  });

  it('ends a session with expires_at 24 h after ended_at; ending it again changes nothing', async () => {
    const clock = manualClock();
    const api = await testApi({ clock });
    const t = await newTenant(api);
    const session = (await api.http.post('/v1/sessions').set(t.auth).send({ agent_id: 'a1' })).body;
    clock.advance(HOUR_MS);
    const endedAt = clock();

    // A bare POST, as fetch sends it (Content-Length: 0, no Content-Type).
    const ended = await api.http.post(`/v1/sessions/${session.id}/end`).set(t.auth);
    expect(ended.status).toBe(200);
    expect(ended.body).toEqual({
      ...session,
      status: 'ended',
      ended_at: endedAt.toISOString(),
      expires_at: new Date(endedAt.getTime() + DAY_MS).toISOString(),
    });

    clock.advance(HOUR_MS);
    const again = await api.http.post(`/v1/sessions/${session.id}/end`).set(t.auth).send({});
    expect(again.status).toBe(200);
    expect(again.body).toEqual(ended.body);
    expect((await api.http.get(`/v1/sessions/${session.id}`).set(t.auth)).body).toEqual(ended.body);
  });

  it('refuses stores into an ended session with 409 session_ended', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const session = (await api.http.post('/v1/sessions').set(t.auth).send({ agent_id: 'a1' })).body;
    expect((await store(api, t, { content: 'while open', session_id: session.id })).status).toBe(201);
    expect((await api.http.post(`/v1/sessions/${session.id}/end`).set(t.auth)).status).toBe(200);
    expectProblem(await store(api, t, { content: 'after the end', session_id: session.id }), 409, 'session_ended');
  });
});
