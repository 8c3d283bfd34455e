import { describe, expect, it } from 'vitest';
import { engine, manualClock, newKey, newTenant, testApi } from '../helpers/harness.js';
import { expectProblem } from '../helpers/problem.js';

const HOUR_MS = 3_600_000;

/** What the console needs from /v1 beyond the rest of the API: a subject list, its sessions, the caller's key. */
describe(`the console's routes on ${engine}`, () => {
  it('lists subjects by external id prefix with their last activity', async () => {
    const clock = manualClock();
    const api = await testApi({ clock });
    const t = await newTenant(api);
    const start = clock().toISOString();
    // Created in one instant: the list's order among them is by id, so the test sorts.
    for (const id of ['cust-1', 'cust-2', 'other', 'cust_%']) {
      await api.http.post('/v1/anchors').set(t.auth).send({ anchor_external_id: id });
    }
    clock.advance(HOUR_MS);
    await api.http
      .post('/v1/memories')
      .set(t.auth)
      .send({ agent_id: 'a1', anchor_external_id: 'cust-2', content: 'Likes tea' });
    const res = await api.http.get('/v1/anchors').set(t.auth).query({ anchor_external_id_prefix: 'cust' });
    expect(res.status).toBe(200);
    expect(
      res.body.anchors
        .map((a: { anchor_external_id: string; last_activity_at: string | null; memory_count: number }) => [
          a.anchor_external_id,
          a.memory_count,
          a.last_activity_at,
        ])
        .sort(),
    ).toEqual([
      ['cust-1', 0, null],
      ['cust-2', 1, clock().toISOString()],
      ['cust_%', 0, null],
    ]);
    expect(start).not.toBe(clock().toISOString());
    // % and _ match themselves, not any text.
    const literal = await api.http.get('/v1/anchors').set(t.auth).query({ anchor_external_id_prefix: 'cust_' });
    expect(literal.body.anchors.map((a: { anchor_external_id: string }) => a.anchor_external_id)).toEqual(['cust_%']);
    const other = await newTenant(api);
    const none = await api.http.get('/v1/anchors').set(other.auth).query({ anchor_external_id_prefix: 'cust' });
    expect(none.body.anchors).toEqual([]);
  });

  it("lists a subject's sessions latest first, paged, and nobody else's", async () => {
    const clock = manualClock();
    const api = await testApi({ clock });
    const t = await newTenant(api);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const s = await api.http.post('/v1/sessions').set(t.auth).send({ agent_id: 'a1', anchor_external_id: 'pat-1' });
      ids.push(s.body.id as string);
      clock.advance(HOUR_MS);
    }
    await api.http.post('/v1/sessions').set(t.auth).send({ agent_id: 'a1', anchor_external_id: 'pat-2' });
    await api.http.post(`/v1/sessions/${ids[0]}/end`).set(t.auth);
    const anchor = await api.http.get('/v1/anchors').set(t.auth).query({ anchor_external_id: 'pat-1' });
    const anchorId = anchor.body.anchors[0].id as string;
    const first = await api.http.get(`/v1/anchors/${anchorId}/sessions`).set(t.auth).query({ limit: 2 });
    expect(first.status).toBe(200);
    expect(first.body.sessions.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[1]]);
    const rest = await api.http
      .get(`/v1/anchors/${anchorId}/sessions`)
      .set(t.auth)
      .query({ limit: 2, cursor: first.body.next_cursor as string });
    expect(rest.body).toMatchObject({ sessions: [{ id: ids[0], status: 'ended' }], next_cursor: null });
    expect(rest.body.sessions[0].expires_at).toEqual(expect.any(String));

    const other = await newTenant(api);
    expectProblem(await api.http.get(`/v1/anchors/${anchorId}/sessions`).set(other.auth), 404, 'not_found');
    expectProblem(
      await api.http.get(`/v1/anchors/${anchorId}/sessions`).set(t.auth).query({ cursor: 'forged' }),
      400,
      'invalid_request',
    );
  });

  it('tells a key its own scopes and agents, without the secret', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const admin = await api.http.get('/v1/keys/current').set(t.auth);
    expect(admin.status).toBe(200);
    expect(admin.body).toMatchObject({ tenant_id: t.tenantId, scopes: ['read', 'write', 'admin'], agent_ids: null });
    expect(JSON.stringify(admin.body)).not.toContain(t.adminKey);
    const reader = await newKey(api, t, ['read']);
    const res = await api.http.get('/v1/keys/current').set(reader.auth);
    expect(res.body).toMatchObject({ id: reader.id, scopes: ['read'], revoked_at: null });
    expectProblem(await api.http.get('/v1/keys/current'), 401, 'unauthorized');
  });
});

describe(`GET /v1/sessions/{id}/memories on ${engine}`, () => {
  it("pages a session's memories oldest first, and is not found in another tenant", async () => {
    const clock = manualClock();
    const api = await testApi({ clock });
    const t = await newTenant(api);
    const session = await api.http.post('/v1/sessions').set(t.auth).send({ agent_id: 'a1', anchor_external_id: 'p-9' });
    const contents = ['Is in Rome this week', 'Flies back on Sunday', 'Wants a window seat'];
    for (const content of contents) {
      await api.http.post('/v1/memories').set(t.auth).send({ agent_id: 'a1', session_id: session.body.id, content });
      clock.advance(1000);
    }
    // An anchored memory that names the session as its provenance belongs to its page too.
    await api.http
      .post('/v1/memories')
      .set(t.auth)
      .send({ agent_id: 'a1', session_id: session.body.id, anchor_external_id: 'p-9', content: 'Is vegetarian' });
    const first = await api.http.get(`/v1/sessions/${session.body.id}/memories`).set(t.auth).query({ limit: 2 });
    expect(first.status).toBe(200);
    expect(first.body.session).toMatchObject({ id: session.body.id, status: 'active', anchor_external_id: 'p-9' });
    expect(first.body.memories.map((m: { content: string }) => m.content)).toEqual(contents.slice(0, 2));
    const rest = await api.http
      .get(`/v1/sessions/${session.body.id}/memories`)
      .set(t.auth)
      .query({ limit: 2, cursor: first.body.next_cursor as string });
    expect(rest.body.memories.map((m: { content: string; binding: string }) => [m.content, m.binding])).toEqual([
      ['Wants a window seat', 'session'],
      ['Is vegetarian', 'anchored'],
    ]);
    expect(rest.body.next_cursor).toBeNull();
    const other = await newTenant(api);
    expectProblem(await api.http.get(`/v1/sessions/${session.body.id}/memories`).set(other.auth), 404, 'not_found');
  });
});
