import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { engine, newKey, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { ids, recall, sorted, startSession, storeMemory, writeCanon, createAnchor } from '../helpers/store-recall.js';

/** Everything tenant A owns, made through the API. */
async function populate(api: TestApi, a: Tenant) {
  const anchorId = await createAnchor(api, a.auth, 'alice');
  const sessionId = await startSession(api, a.auth, { agent_id: 'agent-1', anchor_id: anchorId });
  const memoryId = await storeMemory(api, a.auth, {
    agent_id: 'agent-1',
    content: 'Alice prefers email over phone calls',
    anchor_id: anchorId,
  });
  const sessionMemoryId = await storeMemory(api, a.auth, {
    agent_id: 'agent-1',
    content: 'Alice is calling about an invoice today',
    session_id: sessionId,
  });
  const privateId = await storeMemory(api, a.auth, { agent_id: 'agent-1', content: 'Invoices are sent by email' });
  const canonId = await writeCanon(api, a.auth, 'Never share invoices by phone or email with strangers');
  const key = await newKey(api, a, ['read', 'write']);
  return { anchorId, sessionId, memoryId, sessionMemoryId, privateId, canonId, keyId: key.id, keyAuth: key.auth };
}

describe(`tenant isolation on ${engine}`, () => {
  it("answers another tenant's ids exactly like missing ones, on every route, and changes nothing", async () => {
    const api = await testApi();
    const a = await newTenant(api);
    const b = await newTenant(api);
    const r = await populate(api, a);

    const attempts: [string, string, string][] = [
      ['get', `/v1/memories/${r.memoryId}`, '/v1/memories/{missing}'],
      ['get', `/v1/memories/${r.canonId}`, '/v1/memories/{missing}'],
      ['delete', `/v1/memories/${r.memoryId}`, '/v1/memories/{missing}'],
      // A canon id through the memory door must not answer 409 (which would reveal it exists).
      ['delete', `/v1/memories/${r.canonId}`, '/v1/memories/{missing}'],
      ['get', `/v1/memories/${r.memoryId}/history`, '/v1/memories/{missing}/history'],
      ['get', `/v1/anchors/${r.anchorId}`, '/v1/anchors/{missing}'],
      ['get', `/v1/anchors/${r.anchorId}/memories`, '/v1/anchors/{missing}/memories'],
      ['get', `/v1/sessions/${r.sessionId}`, '/v1/sessions/{missing}'],
      ['post', `/v1/sessions/${r.sessionId}/end`, '/v1/sessions/{missing}/end'],
      ['get', `/v1/canon/${r.canonId}`, '/v1/canon/{missing}'],
      ['delete', `/v1/canon/${r.canonId}`, '/v1/canon/{missing}'],
      ['delete', `/v1/keys/${r.keyId}`, '/v1/keys/{missing}'],
    ];
    for (const [method, path, missingPath] of attempts) {
      const send = (p: string) =>
        method === 'get'
          ? api.http.get(p).set(b.auth)
          : method === 'post'
            ? api.http.post(p).set(b.auth).send({})
            : api.http.delete(p).set(b.auth);
      const foreign = await send(path);
      const missing = await send(missingPath.replace('{missing}', randomUUID()));
      expect({ path, status: foreign.status, code: foreign.body.code }).toEqual({
        path,
        status: 404,
        code: 'not_found',
      });
      expect(foreign.headers['content-type']).toMatch(/^application\/problem\+json/);
      // Same body as for an id that never existed: nothing reveals that the resource exists.
      expect(foreign.body).toEqual(missing.body);
    }

    // Tenant A's resources are untouched by the attempts.
    const memory = await api.http.get(`/v1/memories/${r.memoryId}`).set(a.auth);
    expect(memory.status).toBe(200);
    expect(memory.body.reinforcement_count).toBe(0);
    expect((await api.http.get(`/v1/sessions/${r.sessionId}`).set(a.auth)).body.status).toBe('active');
    expect((await api.http.get(`/v1/canon/${r.canonId}`).set(a.auth)).status).toBe(200);
    expect((await api.http.get(`/v1/anchors/${r.anchorId}`).set(a.auth)).body.memory_count).toBe(1);
    expect((await api.http.get('/v1/anchors').set(r.keyAuth)).status).toBe(200);
    const history = await api.http.get(`/v1/memories/${r.memoryId}/history`).set(a.auth);
    expect(history.body.events.map((e: { action: string }) => e.action)).toEqual(['created']);
  });

  it("refuses another tenant's anchor_id and session_id in stores, sessions and recall", async () => {
    const api = await testApi();
    const a = await newTenant(api);
    const b = await newTenant(api);
    const r = await populate(api, a);
    const before = await api.http.get('/v1/anchors').set(b.auth);
    const aAuditBefore = await api.http.get('/v1/audit').set(a.auth);

    const refused = [
      await api.http
        .post('/v1/memories')
        .set(b.auth)
        .send({ agent_id: 'agent-1', content: 'x y', anchor_id: r.anchorId }),
      await api.http
        .post('/v1/memories')
        .set(b.auth)
        .send({ agent_id: 'agent-1', content: 'x y', session_id: r.sessionId }),
      await api.http.post('/v1/sessions').set(b.auth).send({ agent_id: 'agent-1', anchor_id: r.anchorId }),
      await api.http
        .get('/v1/memories/recall')
        .set(b.auth)
        .query({ agent_id: 'agent-1', query: 'email', anchor_id: r.anchorId }),
      await api.http
        .get('/v1/memories/recall')
        .set(b.auth)
        .query({ agent_id: 'agent-1', query: 'invoice', session_id: r.sessionId }),
    ];
    expect(refused.map((res) => [res.status, res.body.code])).toEqual(Array(5).fill([404, 'not_found']));

    // Nothing was left behind in B, and nothing reached A.
    expect((await api.http.get('/v1/anchors').set(b.auth)).body).toEqual(before.body);
    const bAudit = await api.http.get('/v1/audit').set(b.auth);
    expect(bAudit.body.events.map((e: { action: string }) => e.action)).toEqual(['key_created']);
    expect((await api.http.get('/v1/audit').set(a.auth)).body).toEqual(aAuditBefore.body);
    expect((await api.http.get(`/v1/anchors/${r.anchorId}`).set(a.auth)).body.memory_count).toBe(1);
  });

  it("never shows A's data in B's recall, canon, anchors or audit, even with the same names", async () => {
    const api = await testApi();
    const a = await newTenant(api);
    const b = await newTenant(api);
    const r = await populate(api, a);
    // B uses the same agent id, subject id and wording as A: only the tenant tells them apart.
    const bMemory = await api.http
      .post('/v1/memories')
      .set(b.auth)
      .send({ agent_id: 'agent-1', content: 'Alice prefers email over phone calls', anchor_external_id: 'alice' });
    expect(bMemory.status).toBe(201);
    expect(bMemory.body.outcome).toBe('created');
    expect(bMemory.body.id).not.toBe(r.memoryId);
    expect(bMemory.body.anchor_id).not.toBe(r.anchorId);
    const bPrivate = await storeMemory(api, b.auth, { agent_id: 'agent-1', content: 'Invoices are sent by email' });
    const bCanon = await writeCanon(api, b.auth, 'Never share invoices by phone or email with strangers');

    const results = await recall(api, b.auth, {
      agent_id: 'agent-1',
      query: 'Alice email invoice phone',
      anchor_external_id: 'alice',
      limit: 100,
    });
    expect(sorted(ids(results))).toEqual(sorted([bMemory.body.id, bPrivate, bCanon]));

    const canon = await api.http.get('/v1/canon').set(b.auth);
    expect(ids(canon.body.canon)).toEqual([bCanon]);
    const anchors = await api.http.get('/v1/anchors').set(b.auth);
    expect(ids(anchors.body.anchors)).toEqual([bMemory.body.anchor_id]);
    expect(anchors.body.anchors[0].memory_count).toBe(1);
    const byName = await api.http.get('/v1/anchors').set(b.auth).query({ anchor_external_id: 'alice' });
    expect(ids(byName.body.anchors)).toEqual([bMemory.body.anchor_id]);

    const audit = await api.http.get('/v1/audit').set(b.auth).query({ limit: 200 });
    const aIds = new Set(Object.values(r).filter((v): v is string => typeof v === 'string'));
    const bKeys = await api.http.get('/v1/keys').set(b.auth);
    const bKeyIds = new Set(ids(bKeys.body.keys));
    for (const event of audit.body.events) {
      for (const id of [event.memory_id, event.anchor_id, event.session_id, event.actor.key_id]) {
        expect(aIds.has(id)).toBe(false);
      }
      expect(bKeyIds.has(event.actor.key_id)).toBe(true);
    }
    // Filtering B's audit by A's ids finds nothing.
    for (const filter of [{ memory_id: r.memoryId }, { anchor_id: r.anchorId }]) {
      const filtered = await api.http.get('/v1/audit').set(b.auth).query(filter);
      expect(filtered.status).toBe(200);
      expect(filtered.body.events).toEqual([]);
    }

    // And A's memory did not change because B stored the same words.
    const aMemory = await api.http.get(`/v1/memories/${r.memoryId}`).set(a.auth);
    expect([aMemory.body.reinforcement_count, aMemory.body.confidence]).toEqual([0, 0.7]);
  });
});
