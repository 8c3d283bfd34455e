import { describe, expect, it } from 'vitest';
import { engine, newTenant, testApi } from '../helpers/harness.js';
import { createAnchor, ids, recall, sorted, startSession, storeMemory, writeCanon } from '../helpers/store-recall.js';

/** Recall visibility of docs/api.md §5, within one tenant. Limits are high so nothing is cut by ranking. */
describe(`recall scopes on ${engine}`, () => {
  it("never shows an agent another agent's private memory", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const mine = await storeMemory(api, t.auth, {
      agent_id: 'agent-1',
      content: 'The staging password rotates on Fridays',
    });
    const query = { query: 'staging password rotates Fridays', limit: 100 };
    expect(ids(await recall(api, t.auth, { ...query, agent_id: 'agent-1' }))).toEqual([mine]);
    expect(await recall(api, t.auth, { ...query, agent_id: 'agent-2' })).toEqual([]);
  });

  it("never shows one subject's memory to another, even with word-for-word identical facts", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const fact = 'Prefers to be contacted by email after 6 pm';
    const forA = await storeMemory(api, t.auth, {
      agent_id: 'agent-1',
      content: fact,
      anchor_external_id: 'subject-a',
    });
    const forB = await storeMemory(api, t.auth, {
      agent_id: 'agent-1',
      content: fact,
      anchor_external_id: 'subject-b',
    });
    expect(forA).not.toBe(forB);
    for (const [subject, expected] of [
      ['subject-a', forA],
      ['subject-b', forB],
    ] as const) {
      const results = await recall(api, t.auth, {
        agent_id: 'agent-1',
        query: fact,
        anchor_external_id: subject,
        limit: 100,
      });
      expect(ids(results)).toEqual([expected]);
    }
    // Naming the anchor by id scopes the same way.
    const anchors = await api.http.get('/v1/anchors').set(t.auth).query({ anchor_external_id: 'subject-a' });
    const byId = await recall(api, t.auth, { agent_id: 'agent-1', query: fact, anchor_id: anchors.body.anchors[0].id });
    expect(ids(byId)).toEqual([forA]);
  });

  it('returns no anchored memories at all without an anchor', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const privateId = await storeMemory(api, t.auth, { agent_id: 'agent-1', content: 'Quarterly report due Monday' });
    for (const subject of ['s1', 's2', 's3']) {
      await storeMemory(api, t.auth, {
        agent_id: 'agent-1',
        content: 'Quarterly report due Monday',
        anchor_external_id: subject,
      });
    }
    const results = await recall(api, t.auth, { agent_id: 'agent-1', query: 'quarterly report Monday', limit: 100 });
    expect(ids(results)).toEqual([privateId]);
  });

  it('shows session memories only with their session_id', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const anchorId = await createAnchor(api, t.auth, 'caller');
    const bare = await startSession(api, t.auth, { agent_id: 'agent-1' });
    const ofSubject = await startSession(api, t.auth, { agent_id: 'agent-1', anchor_id: anchorId });
    const other = await startSession(api, t.auth, { agent_id: 'agent-1' });
    const inBare = await storeMemory(api, t.auth, {
      agent_id: 'agent-1',
      content: 'Caller mentioned a broken router',
      session_id: bare,
    });
    const inSubject = await storeMemory(api, t.auth, {
      agent_id: 'agent-1',
      content: 'Caller mentioned a broken router again',
      session_id: ofSubject,
    });
    const durable = await storeMemory(api, t.auth, {
      agent_id: 'agent-1',
      content: 'Router model is X200',
      anchor_id: anchorId,
    });
    const q = { agent_id: 'agent-1', query: 'broken router', limit: 100 };

    expect(await recall(api, t.auth, q)).toEqual([]);
    expect(ids(await recall(api, t.auth, { ...q, session_id: bare }))).toEqual([inBare]);
    expect(await recall(api, t.auth, { ...q, session_id: other })).toEqual([]);
    // The subject alone brings its durable memories, not the session's.
    expect(ids(await recall(api, t.auth, { ...q, anchor_id: anchorId }))).toEqual([durable]);
    // A session of a subject brings that subject's durable memories along (the code's choice; docs/api.md is silent).
    const withSession = await recall(api, t.auth, { ...q, session_id: ofSubject });
    expect(sorted(ids(withSession))).toEqual(sorted([inSubject, durable]));
    const both = await recall(api, t.auth, { ...q, session_id: ofSubject, anchor_external_id: 'caller' });
    expect(sorted(ids(both))).toEqual(sorted([inSubject, durable]));
  });

  it('creates no anchor for an unknown anchor_external_id and returns only private and canon', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const privateId = await storeMemory(api, t.auth, {
      agent_id: 'agent-1',
      content: 'Refund requests need a receipt',
    });
    const anchored = await storeMemory(api, t.auth, {
      agent_id: 'agent-1',
      content: 'Refund requests need a receipt',
      anchor_external_id: 'known',
    });
    const canonId = await writeCanon(api, t.auth, 'Refund requests over 100 EUR need a manager');
    const before = await api.http.get('/v1/anchors').set(t.auth);

    const results = await recall(api, t.auth, {
      agent_id: 'agent-1',
      query: 'refund receipt',
      anchor_external_id: 'never-seen',
      limit: 100,
    });
    expect(sorted(ids(results))).toEqual(sorted([privateId, canonId]));
    expect(ids(results)).not.toContain(anchored);
    const after = await api.http.get('/v1/anchors').set(t.auth);
    expect(after.body).toEqual(before.body);
    expect(ids(after.body.anchors)).toHaveLength(1);
    const lookup = await api.http.get('/v1/anchors').set(t.auth).query({ anchor_external_id: 'never-seen' });
    expect(lookup.body.anchors).toEqual([]);
  });

  it('answers 409 when a session of subject A is recalled with anchor B', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const a = await createAnchor(api, t.auth, 'subject-a');
    const b = await createAnchor(api, t.auth, 'subject-b');
    const session = await startSession(api, t.auth, { agent_id: 'agent-1', anchor_id: a });
    await storeMemory(api, t.auth, { agent_id: 'agent-1', content: 'Asked about pricing', session_id: session });
    const base = { agent_id: 'agent-1', query: 'pricing', session_id: session };
    for (const anchor of [
      { anchor_id: b },
      { anchor_external_id: 'subject-b' },
      { anchor_external_id: 'not-a-subject' },
    ]) {
      const res = await api.http
        .get('/v1/memories/recall')
        .set(t.auth)
        .query({ ...base, ...anchor });
      expect({ anchor, status: res.status, code: res.body.code }).toEqual({ anchor, status: 409, code: 'conflict' });
    }
    // The unknown external id was not created by the refused recall either.
    const anchors = await api.http.get('/v1/anchors').set(t.auth);
    expect(sorted(ids(anchors.body.anchors))).toEqual(sorted([a, b]));
  });

  it('shows canon to every agent and subject of the tenant', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const canonId = await writeCanon(api, t.auth, 'Always confirm the shipping address before dispatch');
    const session = await startSession(api, t.auth, { agent_id: 'agent-9', anchor_external_id: 'subject-z' });
    const q = { query: 'confirm shipping address', limit: 100 };
    const views: Record<string, string>[] = [
      { agent_id: 'agent-1' },
      { agent_id: 'agent-2' },
      { agent_id: 'agent-1', anchor_external_id: 'subject-x' },
      { agent_id: 'agent-2', anchor_external_id: 'subject-z' },
      { agent_id: 'agent-9', session_id: session },
    ];
    for (const view of views) {
      expect({ view, ids: ids(await recall(api, t.auth, { ...q, ...view })) }).toEqual({ view, ids: [canonId] });
    }
  });
});
