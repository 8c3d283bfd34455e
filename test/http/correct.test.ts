import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CorrectedMemoryObject } from '../../src/schemas/objects.js';
import { engine, newKey, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { call, identityWithScopes, inProcessClient } from '../helpers/mcp.js';
import { expectProblem } from '../helpers/problem.js';

const store = async (api: TestApi, t: Tenant, body: Record<string, unknown>) => {
  const res = await api.http
    .post('/v1/memories')
    .set(t.auth)
    .send({ agent_id: 'a1', ...body });
  expect(res.status).toBe(201);
  return res.body as { id: string; anchor_id: string | null; session_id: string | null };
};

const correct = (api: TestApi, auth: { Authorization: string }, id: string, body: Record<string, unknown>) =>
  api.http.patch(`/v1/memories/${id}`).set(auth).send(body);

describe(`PATCH /v1/memories/{id}: a correction supersedes on ${engine}`, () => {
  it('stores the corrected text as a new memory of the same subject and supersedes the old one', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const old = await store(api, t, {
      content: 'Lives in Lisbon',
      anchor_external_id: 'cust-1',
      metadata: { source: 'call' },
    });
    const res = await correct(api, t.auth, old.id, { content: '  Lives in Porto ' });
    expect(res.status).toBe(200);
    const fixed = CorrectedMemoryObject.parse(res.body);
    expect(fixed).toMatchObject({
      content: 'Lives in Porto',
      binding: 'anchored',
      anchor_id: old.anchor_id,
      anchor_external_id: 'cust-1',
      agent_id: 'a1',
      status: 'active',
      confidence: 0.7,
      metadata: { source: 'call' },
      corrects: old.id,
    });
    expect(fixed.id).not.toBe(old.id);

    const before = await api.http.get(`/v1/memories/${old.id}`).set(t.auth);
    expect(before.body).toMatchObject({ status: 'superseded', superseded_by: fixed.id, content: 'Lives in Lisbon' });

    const profile = await api.http.get(`/v1/anchors/${old.anchor_id}/memories`).set(t.auth);
    expect(profile.body.memories.map((m: { content: string }) => m.content)).toEqual(['Lives in Porto']);
    // What the profile replaced is still reachable from the subject.
    const replaced = await api.http
      .get(`/v1/anchors/${old.anchor_id}/memories`)
      .query({ status: 'superseded' })
      .set(t.auth);
    expect(replaced.status).toBe(200);
    expect(replaced.body.memories).toEqual([
      expect.objectContaining({ id: old.id, status: 'superseded', superseded_by: fixed.id }),
    ]);
    const bad = await api.http.get(`/v1/anchors/${old.anchor_id}/memories`).query({ status: 'gone' }).set(t.auth);
    expectProblem(bad, 400, 'invalid_request');

    // Audited as a correction, by the key alone (a person, as the console corrects), without content:
    // not as the memory's agent a1, which never said it.
    const history = await api.http.get(`/v1/memories/${old.id}/history`).set(t.auth);
    const last = history.body.events.at(-1);
    expect(last).toMatchObject({
      action: 'corrected',
      memory_id: old.id,
      anchor_id: old.anchor_id,
      actor: { key_id: expect.any(String), agent_id: null },
      changes: { superseded_by: fixed.id, binding: 'anchored', existing: false },
    });
    expect(JSON.stringify(history.body)).not.toMatch(/Lisbon|Porto/);
    const created = await api.http.get(`/v1/memories/${fixed.id}/history`).set(t.auth);
    expect(created.body.events).toEqual([
      expect.objectContaining({ action: 'created', changes: expect.objectContaining({ corrects: old.id }) }),
    ]);
    const audit = await api.http.get('/v1/audit').set(t.auth).query({ action: 'corrected' });
    expect(audit.body.events.map((e: { memory_id: string }) => e.memory_id)).toEqual([old.id]);
  });

  it('names the correcting agent in the trail and keeps private and session memories where they were', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const mine = await store(api, t, { content: 'Escalations go to Ana' });
    const res = await correct(api, t.auth, mine.id, { content: 'Escalations go to Rui', agent_id: 'reviewer' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ binding: 'private', agent_id: 'a1' });
    const history = await api.http.get(`/v1/memories/${mine.id}/history`).set(t.auth);
    expect(history.body.events.at(-1).actor.agent_id).toBe('reviewer');

    const session = await api.http.post('/v1/sessions').set(t.auth).send({ agent_id: 'a1' });
    const note = await store(api, t, { content: 'Is in a meeting', session_id: session.body.id });
    const fixed = await correct(api, t.auth, note.id, { content: 'Is on holiday' });
    expect(fixed.body).toMatchObject({ binding: 'session', session_id: session.body.id, corrects: note.id });
  });

  it('points the old memory at the memory that already holds the corrected text, without a twin', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const wrong = await store(api, t, { content: 'Likes tea', anchor_external_id: 'cust-2' });
    const right = await store(api, t, { content: 'Likes coffee', anchor_external_id: 'cust-2' });
    const res = await correct(api, t.auth, wrong.id, { content: 'likes coffee' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: right.id, corrects: wrong.id });
    const profile = await api.http.get(`/v1/anchors/${wrong.anchor_id}/memories`).set(t.auth);
    expect(profile.body.memories.map((m: { id: string }) => m.id)).toEqual([right.id]);
  });

  it('lets one of two corrections racing on a memory win; the other is told what superseded it', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const m = await store(api, t, { content: 'Lives in Lisbon', anchor_external_id: 'cust-race' });
    const answers = await Promise.all([
      correct(api, t.auth, m.id, { content: 'Lives in Porto' }),
      correct(api, t.auth, m.id, { content: 'Lives in Faro' }),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    const winner = answers.find((r) => r.status === 200);
    const profile = await api.http.get(`/v1/anchors/${m.anchor_id}/memories`).set(t.auth);
    expect(profile.body.memories.map((x: { id: string }) => x.id)).toEqual([winner?.body.id]);
  });

  it('refuses what cannot be corrected, naming why', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const m = await store(api, t, { content: 'Lives in Lisbon', anchor_external_id: 'cust-3' });
    expectProblem(await correct(api, t.auth, m.id, { content: 'Lives in  Lisbon' }), 409, 'conflict');
    const first = await correct(api, t.auth, m.id, { content: 'Lives in Porto' });
    expect(first.status).toBe(200);
    const again = await correct(api, t.auth, m.id, { content: 'Lives in Faro' });
    expectProblem(again, 409, 'conflict');
    expect(again.body.detail).toContain(first.body.id);

    const canon = await api.http.post('/v1/canon').set(t.auth).send({ agent_id: 'a1', content: 'Be polite' });
    expectProblem(await correct(api, t.auth, canon.body.id, { content: 'Be rude' }), 409, 'conflict');

    const empty = await correct(api, t.auth, first.body.id, { content: '   ' });
    expectProblem(empty, 400, 'invalid_request');
    expect(empty.body.errors[0].path).toBe('content');
    expectProblem(await correct(api, t.auth, first.body.id, {}), 400, 'invalid_request');
    expectProblem(await correct(api, t.auth, randomUUID(), { content: 'x' }), 404, 'not_found');
    expectProblem(await correct(api, t.auth, 'not-a-uuid', { content: 'x' }), 404, 'not_found');
    const long = 'x'.repeat(api.core.config.contentLimitChars + 1);
    expectProblem(await correct(api, t.auth, first.body.id, { content: long }), 413, 'payload_too_large');
  });

  it("needs write, hides another tenant's memory and another agent's private memory from a bound key", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const m = await store(api, t, { content: 'Owes 30 euros' });
    const reader = await newKey(api, t, ['read']);
    expectProblem(await correct(api, reader.auth, m.id, { content: 'Owes 40 euros' }), 403, 'insufficient_scope');

    const other = await newTenant(api);
    expectProblem(await correct(api, other.auth, m.id, { content: 'Owes 40 euros' }), 404, 'not_found');

    const bound = await api.http
      .post('/v1/keys')
      .set(t.auth)
      .send({ name: 'b', scopes: ['read', 'write'], agent_ids: ['a2'] });
    const boundAuth = { Authorization: `Bearer ${bound.body.api_key as string}` };
    expectProblem(await correct(api, boundAuth, m.id, { content: 'Owes 40 euros' }), 404, 'not_found');
    const shared = await store(api, t, { content: 'Has a dog', anchor_external_id: 'cust-4' });
    // A shared memory formed by a1: the key bound to a2 corrects it as a2, never as a1.
    expectProblem(
      await correct(api, boundAuth, shared.id, { content: 'Has a cat', agent_id: 'a1' }),
      403,
      'insufficient_scope',
    );
    const ok = await correct(api, boundAuth, shared.id, { content: 'Has a cat' });
    expect(ok.status).toBe(200);
    const trail = await api.http.get(`/v1/memories/${shared.id}/history`).set(t.auth);
    expect(trail.body.events.at(-1).actor.agent_id).toBe('a2');
    // A key bound to several agents acts as the memory's agent when it is one of them, else names one.
    const twoAgents = await api.http
      .post('/v1/keys')
      .set(t.auth)
      .send({ name: 'c', scopes: ['read', 'write'], agent_ids: ['a1', 'a3'] });
    const twoAuth = { Authorization: `Bearer ${twoAgents.body.api_key as string}` };
    const fixed = ok.body as { id: string };
    const asA1 = await correct(api, twoAuth, fixed.id, { content: 'Has two cats' });
    expect(asA1.status).toBe(200);
    expect((await api.http.get(`/v1/memories/${fixed.id}/history`).set(t.auth)).body.events.at(-1).actor.agent_id).toBe(
      'a1',
    );
    const parrot = await store(api, t, { content: 'Has a parrot', anchor_external_id: 'cust-4', agent_id: 'a2' });
    expectProblem(await correct(api, twoAuth, parrot.id, { content: 'Has two parrots' }), 403, 'insufficient_scope');
    expect((await correct(api, twoAuth, parrot.id, { content: 'Has two parrots', agent_id: 'a3' })).status).toBe(200);

    const unchanged = await api.http.get(`/v1/memories/${m.id}`).set(t.auth);
    expect(unchanged.body).toMatchObject({ status: 'active', content: 'Owes 30 euros' });
  });

  it('is the MCP correct tool too', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const m = await store(api, t, { content: 'Prefers phone calls', anchor_external_id: 'cust-5' });
    const identity = await identityWithScopes(api, t, ['read', 'write'], 'mcp-agent');
    const { client, close } = await inProcessClient(api.core, identity);
    const result = await call(client, 'correct', { memory_id: m.id, content: 'Prefers email' });
    expect(result.isError).toBeFalsy();
    const fixed = CorrectedMemoryObject.parse(result.structuredContent);
    expect(fixed).toMatchObject({ content: 'Prefers email', corrects: m.id, anchor_external_id: 'cust-5' });
    const again = await call(client, 'correct', { memory_id: m.id, content: 'Prefers letters' });
    expect(again.isError).toBe(true);
    const history = await api.http.get(`/v1/memories/${m.id}/history`).set(t.auth);
    expect(history.body.events.at(-1)).toMatchObject({ action: 'corrected', actor: { agent_id: 'mcp-agent' } });
    await close();

    const reader = await identityWithScopes(api, t, ['read']);
    const readOnly = await inProcessClient(api.core, reader);
    const refused = await call(readOnly.client, 'correct', { memory_id: fixed.id, content: 'Prefers fax' });
    expect(refused.isError).toBe(true);
    await readOnly.close();
  });
});
