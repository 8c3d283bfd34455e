import { beforeAll, describe, expect, it } from 'vitest';
import { engine, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { createAnchor, startSession, storeMemory } from '../helpers/store-recall.js';
import { expectProblem } from '../helpers/problem.js';
import { call, identityWithScopes, inProcessClient, text } from '../helpers/mcp.js';

/**
 * Filters (docs/api.md, "Filters") on every operator, through POST /v1/memories/recall, the lists
 * and the exports: a filter only ever narrows what the caller may see.
 */
describe(`memory filters on ${engine}`, () => {
  let api: TestApi;
  let t: Tenant;
  const id: Record<string, string> = {};
  let anchorId: string;
  let sessionId: string;

  beforeAll(async () => {
    api = await testApi();
    t = await newTenant(api);
    anchorId = await createAnchor(api, t.auth, 'cust-1');
    await createAnchor(api, t.auth, 'cust-2');
    const subject = (content: string, metadata: Record<string, unknown>) =>
      storeMemory(api, t.auth, { agent_id: 'a1', anchor_external_id: 'cust-1', content, metadata });
    id.invoice = await subject('An invoice was sent for the March order', {
      topic: 'billing',
      priority: 3,
      resolved: false,
      due: '2025-03-01',
    });
    id.refund = await subject('A refund was issued for the broken kettle', { topic: 'refunds', priority: 1 });
    id.contact = await subject('The customer prefers to be contacted by email', { topic: 'contact', priority: '2' });
    id.declined = await subject('The card was declined twice in April', {
      topic: 'billing',
      priority: 5,
      resolved: true,
      due: '2025-05-01',
    });
    id.lisbon = await subject('The customer lives in Lisbon near the river', {});
    const canon = await api.http
      .post('/v1/canon')
      .set(t.auth)
      .send({ agent_id: 'a1', content: 'Never read card numbers back to a customer', metadata: { topic: 'policy' } });
    expect(canon.status).toBe(201);
    id.canon = canon.body.id as string;
    id.mine = await storeMemory(api, t.auth, {
      agent_id: 'a1',
      content: 'My own note: billing questions go to Dana',
      metadata: { topic: 'billing' },
    });
    // Out of a1's scope for cust-1, whatever the filter says.
    id.theirs = await storeMemory(api, t.auth, {
      agent_id: 'a2',
      content: "Agent two's private billing note about the invoice",
      metadata: { topic: 'billing' },
    });
    id.other = await storeMemory(api, t.auth, {
      agent_id: 'a1',
      anchor_external_id: 'cust-2',
      content: 'Another customer disputed a billing invoice',
      metadata: { topic: 'billing' },
    });
    sessionId = await startSession(api, t.auth, { agent_id: 'a1', anchor_external_id: 'cust-1' });
    id.session = await storeMemory(api, t.auth, {
      agent_id: 'a1',
      session_id: sessionId,
      content: 'In this call the customer asked about the invoice total',
      metadata: { topic: 'billing', step: 1 },
    });
  });

  const names = (ids: readonly string[]) =>
    ids.map((x) => Object.entries(id).find(([, v]) => v === x)?.[0] ?? x).sort();

  async function recalled(filter: unknown, extra: Record<string, unknown> = {}): Promise<string[]> {
    const res = await api.http
      .post('/v1/memories/recall')
      .set(t.auth)
      .send({
        agent_id: 'a1',
        anchor_external_id: 'cust-1',
        query: 'billing invoice card refund customer contact',
        limit: 100,
        filter,
        ...extra,
      });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return names((res.body.results as { id: string }[]).map((r) => r.id));
  }

  const SUBJECT_SCOPE = ['canon', 'contact', 'declined', 'invoice', 'lisbon', 'mine', 'refund'];

  it('recalls the whole scope without a filter, and with {}', async () => {
    expect(await recalled(undefined)).toEqual(SUBJECT_SCOPE);
    expect(await recalled({})).toEqual(SUBJECT_SCOPE);
  });

  it.each([
    ['a value, short for $eq', { 'metadata.topic': 'billing' }, ['declined', 'invoice', 'mine']],
    ['$eq', { 'metadata.topic': { $eq: 'billing' } }, ['declined', 'invoice', 'mine']],
    [
      '$ne (a memory without the key is not equal)',
      { 'metadata.topic': { $ne: 'billing' } },
      ['canon', 'contact', 'lisbon', 'refund'],
    ],
    ['$in', { 'metadata.topic': { $in: ['billing', 'refunds'] } }, ['declined', 'invoice', 'mine', 'refund']],
    ['$nin', { 'metadata.topic': { $nin: ['billing', 'refunds'] } }, ['canon', 'contact', 'lisbon']],
    ['$gt on numbers', { 'metadata.priority': { $gt: 3 } }, ['declined']],
    ['$gte on numbers', { 'metadata.priority': { $gte: 3 } }, ['declined', 'invoice']],
    ['$lt on numbers (the string "2" is not a number)', { 'metadata.priority': { $lt: 3 } }, ['refund']],
    ['$lte on numbers', { 'metadata.priority': { $lte: 1 } }, ['refund']],
    ['a number never equals a string', { 'metadata.priority': 2 }, []],
    ['a string equals a string', { 'metadata.priority': '2' }, ['contact']],
    ['a string range holds strings only', { 'metadata.priority': { $gt: '1' } }, ['contact']],
    ['ISO dates compared as strings', { 'metadata.due': { $lt: '2025-04-01' } }, ['invoice']],
    ['a range of two operators', { 'metadata.priority': { $gt: 1, $lt: 5 } }, ['invoice']],
    ['$exists true', { 'metadata.resolved': { $exists: true } }, ['declined', 'invoice']],
    ['$exists false', { 'metadata.resolved': { $exists: false } }, ['canon', 'contact', 'lisbon', 'mine', 'refund']],
    ['a boolean', { 'metadata.resolved': false }, ['invoice']],
    ['a missing key matches nothing', { 'metadata.nope': 'x' }, []],
    ['$ne on a missing key matches everything', { 'metadata.nope': { $ne: 'x' } }, SUBJECT_SCOPE],
    ['$not', { $not: { 'metadata.topic': 'billing' } }, ['canon', 'contact', 'lisbon', 'refund']],
    [
      'nested $or, $and and $not',
      {
        $or: [
          { 'metadata.topic': 'refunds' },
          { $and: [{ 'metadata.topic': 'billing' }, { $not: { 'metadata.priority': { $lt: 5 } } }] },
        ],
      },
      ['declined', 'mine', 'refund'],
    ],
    ['two keys in one object hold together', { 'metadata.topic': 'billing', 'metadata.resolved': true }, ['declined']],
    ['binding', { binding: 'canon' }, ['canon']],
    ['binding $in', { binding: { $in: ['private', 'canon'] } }, ['canon', 'mine']],
    ['agent_id', { agent_id: 'a1' }, SUBJECT_SCOPE],
    ['pinned', { pinned: true }, []],
    ['pinned $ne', { pinned: { $ne: true } }, SUBJECT_SCOPE],
    ['created_at after a date', { created_at: { $gte: '2000-01-01' } }, SUBJECT_SCOPE],
    ['created_at before a date-time', { created_at: { $lt: '2000-01-01T00:00:00Z' } }, []],
    ['occurred_at', { occurred_at: { $lte: '9999-12-31T23:59:59Z' } }, SUBJECT_SCOPE],
  ])('%s', async (_label, filter, expected) => {
    expect(await recalled(filter)).toEqual(expected);
  });

  it("never widens the scope: another agent's private memories and another subject's stay out", async () => {
    expect(await recalled({ agent_id: 'a2' })).toEqual([]);
    expect(await recalled({ $or: [{ binding: 'private' }, { agent_id: 'a2' }] })).toEqual(['mine']);
    expect(await recalled({ binding: { $in: ['anchored', 'private'] }, 'metadata.topic': 'billing' })).toEqual([
      'declined',
      'invoice',
      'mine',
    ]);
    expect(await recalled({ $not: { agent_id: 'a1' } })).toEqual([]);
    // A session's memories come only with the session, whatever the filter names.
    expect(await recalled({ binding: 'session' })).toEqual([]);
    expect(await recalled({ binding: 'session' }, { session_id: sessionId })).toEqual(['session']);
  });

  it('GET recall still answers, and takes no filter', async () => {
    const res = await api.http
      .get('/v1/memories/recall')
      .set(t.auth)
      .query({ agent_id: 'a1', anchor_external_id: 'cust-1', query: 'invoice', filter: '{}' });
    expectProblem(res, 400, 'invalid_request');
    expect(res.body.errors[0].path).toBe('filter');
  });

  it.each([
    [{ 'metadata.topic': { $regex: 'bill' } }, 'filter.metadata.topic.$regex', 'unknown operator $regex'],
    [{ $and: [{ 'metadata.a': 1 }, { 'metadata.b': { $gt: true } }] }, 'filter.$and.1.metadata.b.$gt', 'booleans'],
    [{ topic: 'billing' }, 'filter.topic', 'unknown field'],
    [{ binding: 'public' }, 'filter.binding', 'must be one of'],
    [
      { $not: { $not: { $not: { $not: { $not: { $not: { pinned: true } } } } } } },
      'filter.$not.$not.$not.$not.$not.$not',
      'deeper',
    ],
    [{ 'metadata.a': { $in: Array.from({ length: 65 }, (_, i) => i) } }, 'filter.metadata.a.$in', 'more than 64'],
    ['billing', 'filter', 'object'],
  ])('refuses a bad filter with 400 naming its path: %j', async (filter, path, message) => {
    const res = await api.http
      .post('/v1/memories/recall')
      .set(t.auth)
      .send({ agent_id: 'a1', query: 'billing', filter });
    expectProblem(res, 400, 'invalid_request');
    expect(res.body.errors[0]).toMatchObject({ path, message: expect.stringContaining(message) });
    expect(res.body.detail).toContain(path);
  });

  it('takes the GET fields as JSON: a boolean flag, a number limit, and refuses unknown fields', async () => {
    const ok = await api.http.post('/v1/memories/recall').set(t.auth).send({
      agent_id: 'a1',
      anchor_external_id: 'cust-1',
      query: 'invoice',
      limit: 2,
      include_superseded: true,
    });
    expect(ok.status).toBe(200);
    expect(ok.body.results).toHaveLength(2);
    const flag = await api.http
      .post('/v1/memories/recall')
      .set(t.auth)
      .send({ agent_id: 'a1', query: 'invoice', include_superseded: 'true' });
    expectProblem(flag, 400, 'invalid_request');
    expect(flag.body.errors[0].path).toBe('include_superseded');
    for (const limit of ['5', true, 0, 2.5]) {
      const bad = await api.http.post('/v1/memories/recall').set(t.auth).send({ agent_id: 'a1', query: 'x', limit });
      expectProblem(bad, 400, 'invalid_request');
      expect(bad.body.errors[0].path).toBe('limit');
    }
    const typo = await api.http.post('/v1/memories/recall').set(t.auth).send({ agent_id: 'a1', query: 'x', filtr: {} });
    expectProblem(typo, 400, 'invalid_request');
    expect(typo.body.errors[0].path).toBe('filtr');
  });

  const filterParam = (filter: unknown) => ({ filter: JSON.stringify(filter) });

  it("filters a subject's memories, a session's, canon and both exports", async () => {
    const billing = { 'metadata.topic': 'billing' };
    const profile = await api.http.get(`/v1/anchors/${anchorId}/memories`).set(t.auth).query(filterParam(billing));
    expect(profile.status).toBe(200);
    expect(names(profile.body.memories.map((m: { id: string }) => m.id))).toEqual(['declined', 'invoice']);

    const session = await api.http
      .get(`/v1/sessions/${sessionId}/memories`)
      .set(t.auth)
      .query(filterParam({ 'metadata.step': { $gte: 1 } }));
    expect(names(session.body.memories.map((m: { id: string }) => m.id))).toEqual(['session']);
    const none = await api.http
      .get(`/v1/sessions/${sessionId}/memories`)
      .set(t.auth)
      .query(filterParam({ 'metadata.step': { $gt: 1 } }));
    expect(none.body.memories).toEqual([]);

    const canon = await api.http
      .get('/v1/canon')
      .set(t.auth)
      .query(filterParam({ 'metadata.topic': 'policy' }));
    expect(names(canon.body.canon.map((m: { id: string }) => m.id))).toEqual(['canon']);
    const noCanon = await api.http.get('/v1/canon').set(t.auth).query(filterParam(billing));
    expect(noCanon.body.canon).toEqual([]);

    const subject = await api.http.get(`/v1/anchors/${anchorId}/export`).set(t.auth).query(filterParam(billing));
    expect(subject.status).toBe(200);
    expect(names(subject.body.memories.map((m: { id: string }) => m.id))).toEqual(['declined', 'invoice', 'session']);
    expect(subject.body.sessions).toHaveLength(1);

    const tenant = await api.http
      .get('/v1/export')
      .set(t.auth)
      .query(filterParam({ $or: [billing, { 'metadata.topic': 'policy' }] }))
      .buffer(true)
      .parse((res, done) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => done(null, text));
      });
    expect(tenant.status).toBe(200);
    const records = (tenant.body as string)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; id?: string; counts?: Record<string, number> });
    const exported = names(records.filter((r) => r.type === 'memory' || r.type === 'canon').map((r) => r.id as string));
    expect(exported).toEqual(['canon', 'declined', 'invoice', 'mine', 'other', 'session', 'theirs']);
    expect(records.at(-1)).toMatchObject({ type: 'end', counts: { memories: 6, canon: 1, anchors: 2 } });
  });

  it('refuses a bad filter on the lists with 400 naming its path', async () => {
    const notJson = await api.http.get(`/v1/anchors/${anchorId}/memories`).set(t.auth).query({ filter: '{topic' });
    expectProblem(notJson, 400, 'invalid_request');
    expect(notJson.body.errors[0]).toEqual({ path: 'filter', message: 'must be a JSON object' });
    const bad = await api.http
      .get('/v1/canon')
      .set(t.auth)
      .query(filterParam({ 'metadata.a': { $lt: false } }));
    expectProblem(bad, 400, 'invalid_request');
    expect(bad.body.errors[0].path).toBe('filter.metadata.a.$lt');
  });

  it('filters MCP recall the same way, and names the path of a bad filter', async () => {
    const identity = await identityWithScopes(api, t, ['read'], 'a1');
    const { client, close } = await inProcessClient(api.core, identity);
    try {
      const { tools } = await client.listTools();
      const schema = tools.find((tool) => tool.name === 'recall')?.inputSchema.properties?.filter as {
        description?: string;
      };
      expect(schema.description).toContain('{"metadata.topic": "billing"}');
      const ok = await call(client, 'recall', {
        query: 'billing invoice card',
        subject: 'cust-1',
        limit: 100,
        filter: { 'metadata.topic': 'billing', 'metadata.priority': { $gte: 5 } },
      });
      expect(ok.isError).toBeFalsy();
      expect(names((ok.structuredContent?.results as { id: string }[]).map((r) => r.id))).toEqual(['declined']);
      const bad = await call(client, 'recall', { query: 'billing', filter: { 'metadata.topic': { $like: 'bill%' } } });
      expect(bad.isError).toBe(true);
      expect(text(bad)).toContain('filter.metadata.topic.$like');
    } finally {
      await close();
    }
  });
});
