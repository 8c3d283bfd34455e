import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { engine, manualClock, newKey, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { expectProblem, UUID } from '../helpers/problem.js';

const writeCanon = (api: TestApi, t: Tenant, content: string, extra: Record<string, unknown> = {}) =>
  api.http
    .post('/v1/canon')
    .set(t.auth)
    .send({ agent_id: 'policy-bot', content, ...extra });

describe(`POST /v1/canon on ${engine}`, () => {
  it('writes an entry once: the same content in other whitespace answers 200 with the same entry', async () => {
    const clock = manualClock();
    const api = await testApi({ clock });
    const t = await newTenant(api);
    const first = await writeCanon(api, t, ' Refunds are  issued within 30 days. ', { metadata: { v: 1 } });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(UUID),
      agent_id: 'policy-bot',
      // The code keeps canon in its normalized form (trimmed, whitespace collapsed).
      content: 'Refunds are issued within 30 days.',
      binding: 'canon',
      metadata: { v: 1 },
      created_at: clock().toISOString(),
    });

    clock.advance(60_000);
    const again = await writeCanon(api, t, 'Refunds are issued\n\twithin 30 days.', {
      agent_id: 'other',
      metadata: { v: 2 },
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);

    const different = await writeCanon(api, t, 'Refunds are issued within 31 days.');
    expect(different.status).toBe(201);
    expect(different.body.id).not.toBe(first.body.id);
  });

  it('needs the admin scope', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const rw = await newKey(api, t, ['read', 'write']);
    const res = await api.http.post('/v1/canon').set(rw.auth).send({ agent_id: 'a1', content: 'Be polite.' });
    expectProblem(res, 403, 'insufficient_scope');
    expect((await api.http.get('/v1/canon').set(t.auth)).body.canon).toEqual([]);
  });

  it('answers 400 to blank content and 413 to content over the limit', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    expectProblem(await writeCanon(api, t, '   '), 400, 'invalid_request');
    expectProblem(await writeCanon(api, t, 'x'.repeat(8001)), 413, 'payload_too_large');
    expect((await writeCanon(api, t, 'x'.repeat(8000))).status).toBe(201);
  });
});

describe(`GET /v1/canon on ${engine}`, () => {
  it('lists canon only, oldest first, in pages', async () => {
    const clock = manualClock();
    const api = await testApi({ clock });
    const t = await newTenant(api);
    const written: string[] = [];
    for (const rule of ['Rule one.', 'Rule two.', 'Rule three.']) {
      written.push((await writeCanon(api, t, rule)).body.id);
      clock.advance(1000);
    }
    const memory = await api.http.post('/v1/memories').set(t.auth).send({ agent_id: 'a1', content: 'Rule four.' });
    expect(memory.status).toBe(201);

    const first = await api.http.get('/v1/canon').set(t.auth).query({ limit: 2 });
    expect(first.status).toBe(200);
    expect(first.body.canon.map((c: { id: string }) => c.id)).toEqual(written.slice(0, 2));
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await api.http.get('/v1/canon').set(t.auth).query({ limit: 2, cursor: first.body.next_cursor });
    expect(second.body).toEqual({
      canon: [expect.objectContaining({ id: written[2], content: 'Rule three.' })],
      next_cursor: null,
    });
  });

  it('answers 400 to a forged cursor', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const forged = Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000Z', 'x'.repeat(36)])).toString('base64url');
    for (const cursor of ['!!', forged]) {
      expectProblem(await api.http.get('/v1/canon').set(t.auth).query({ cursor }), 400, 'invalid_request');
    }
  });
});

describe(`GET and DELETE /v1/canon/{id} on ${engine}`, () => {
  it('returns an entry; a delete answers 204 and then the entry is gone', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const entry = (await writeCanon(api, t, 'Never share passwords.')).body;
    const got = await api.http.get(`/v1/canon/${entry.id}`).set(t.auth);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(entry);

    const deleted = await api.http.delete(`/v1/canon/${entry.id}`).set(t.auth);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectProblem(await api.http.get(`/v1/canon/${entry.id}`).set(t.auth), 404, 'not_found');
    expectProblem(await api.http.delete(`/v1/canon/${entry.id}`).set(t.auth), 404, 'not_found');
    expect((await api.http.get('/v1/canon').set(t.auth)).body.canon).toEqual([]);
  });

  it('answers 404 under /v1/canon for a memory that is not canon, and leaves it alone', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const memory = (await api.http.post('/v1/memories').set(t.auth).send({ agent_id: 'a1', content: 'Not canon.' }))
      .body;
    expectProblem(await api.http.get(`/v1/canon/${memory.id}`).set(t.auth), 404, 'not_found');
    expectProblem(await api.http.delete(`/v1/canon/${memory.id}`).set(t.auth), 404, 'not_found');
    expectProblem(await api.http.get(`/v1/canon/${randomUUID()}`).set(t.auth), 404, 'not_found');
    expect((await api.http.get(`/v1/memories/${memory.id}`).set(t.auth)).status).toBe(200);
  });

  it('answers 409 when canon is deleted through /v1/memories, and keeps it', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const entry = (await writeCanon(api, t, 'Escalate legal threats.')).body;
    expectProblem(await api.http.delete(`/v1/memories/${entry.id}`).set(t.auth), 409, 'conflict');
    expect((await api.http.get(`/v1/canon/${entry.id}`).set(t.auth)).status).toBe(200);
  });

  it('deletes only with the admin scope', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const entry = (await writeCanon(api, t, 'Sign emails with the team name.')).body;
    const rw = await newKey(api, t, ['read', 'write']);
    expectProblem(await api.http.delete(`/v1/canon/${entry.id}`).set(rw.auth), 403, 'insufficient_scope');
    expect((await api.http.get(`/v1/canon/${entry.id}`).set(rw.auth)).status).toBe(200);
  });
});
