import { describe, expect, it } from 'vitest';
import { engine, newKey, newTenant, testApi, type TestApi, type Tenant } from '../helpers/harness.js';
import { startSession } from '../helpers/store-recall.js';
import { parsedStatementsKept } from '../../src/beliefs/contradiction.js';

interface Result {
  outcome?: string;
  memory?: {
    id: string;
    content: string;
    binding: string;
    anchor_external_id: string | null;
    reinforcement_count: number;
    supersedes?: string[];
  };
  problem?: { status: number; code: string; detail: string; errors?: { path: string; message: string }[] };
}

async function batch(api: TestApi, auth: { Authorization: string }, items: unknown[]): Promise<Result[]> {
  const res = await api.http.post('/v1/memories/batch').set(auth).send({ items });
  if (res.status !== 200) throw new Error(`batch: ${res.status} ${JSON.stringify(res.body)}`);
  const results = (res.body as { results: Result[] }).results;
  expect(results).toHaveLength(items.length);
  return results;
}

/**
 * The tenant's memories and audit events, with ids replaced by what they name (sessions by their
 * place in `sessions`): the memories in storing order within each subject, each memory's events in
 * their order. A batch stores different subjects at once, so their order between subjects differs.
 */
async function snapshot(api: TestApi, t: Tenant, sessions: readonly string[]) {
  const db = api.core.db;
  const memories = await db
    .selectFrom('memories as m')
    .leftJoin('entities as e', (j) => j.onRef('e.id', '=', 'm.anchor_id').onRef('e.tenant_id', '=', 'm.tenant_id'))
    .select([
      'm.id',
      'm.content',
      'm.agent_id',
      'm.binding',
      'm.status',
      'm.confidence',
      'm.reinforcement_count',
      'm.superseded_by',
      'm.session_id',
      'm.metadata',
      'm.window_embedding',
      'e.external_id',
    ])
    .where('m.tenant_id', '=', t.tenantId)
    .orderBy('m.seq')
    .execute();
  const contentOf = new Map(memories.map((m) => [m.id, `${m.external_id ?? m.agent_id}/${m.binding}:${m.content}`]));
  const events = await db
    .selectFrom('audit_events')
    .select(['action', 'memory_id', 'changes', 'actor_agent_id'])
    .where('tenant_id', '=', t.tenantId)
    .where('memory_id', 'is not', null)
    .orderBy('seq')
    .execute();
  const named = (changes: unknown) =>
    JSON.parse(JSON.stringify(changes), (key, value: unknown) =>
      typeof value === 'string' && contentOf.has(value) ? contentOf.get(value) : value,
    ) as unknown;
  return {
    memories: memories
      .map((m) => ({
        content: m.content,
        agent: m.agent_id,
        binding: m.binding,
        status: m.status,
        confidence: m.confidence,
        reinforcements: m.reinforcement_count,
        supersededBy: m.superseded_by ? contentOf.get(m.superseded_by) : null,
        session: m.session_id ? sessions.indexOf(m.session_id) : null,
        subject: m.external_id,
        metadata: m.metadata,
        window: m.window_embedding === null ? null : String(m.window_embedding),
      }))
      .sort((x, y) =>
        String(x.subject ?? x.session ?? x.agent).localeCompare(String(y.subject ?? y.session ?? y.agent)),
      ),
    events: events
      .map((e) => ({
        action: e.action,
        memory: e.memory_id ? contentOf.get(e.memory_id) : null,
        agent: e.actor_agent_id,
        changes: named(e.changes),
      }))
      .sort((x, y) => String(x.memory).localeCompare(String(y.memory))),
  };
}

describe(`POST /v1/memories/batch on ${engine}`, () => {
  it('answers one result per item, in order: an outcome, or the item’s own problem', async () => {
    const api = await testApi({ config: { CONTENT_LIMIT_CHARS: '100' } });
    const t = await newTenant(api);
    const bound = await api.http
      .post('/v1/keys')
      .set(t.auth)
      .send({ name: 'bound', scopes: ['read', 'write'], agent_ids: ['agent-1'] });
    const auth = { Authorization: `Bearer ${(bound.body as { api_key: string }).api_key}` };
    const results = await batch(api, auth, [
      { agent_id: 'agent-1', content: 'Prefers email', anchor_external_id: 'alice' },
      { agent_id: 'agent-1' },
      { agent_id: 'agent-1', content: 'Likes tea', anchor_externalid: 'alice' },
      { agent_id: 'agent-1', content: 'x'.repeat(101) },
      { agent_id: 'agent-2', content: 'Likes tea' },
      { agent_id: 'agent-1', content: 'Likes tea', session_id: '00000000-0000-4000-8000-000000000000' },
      'not an object',
      { agent_id: 'agent-1', content: 'Likes tea', anchor_external_id: 'alice' },
    ]);
    expect(results.map((r) => r.outcome ?? r.problem?.status)).toEqual([
      'created',
      400,
      400,
      413,
      403,
      404,
      400,
      'created',
    ]);
    expect(results[1]?.problem?.errors?.[0]?.path).toBe('content');
    expect(results[2]?.problem?.errors?.[0]).toMatchObject({ path: 'anchor_externalid' });
    expect(results[0]?.memory).toMatchObject({ content: 'Prefers email', anchor_external_id: 'alice' });
    // Only the two valid items were stored.
    const stored = await api.core.db
      .selectFrom('memories')
      .select('content')
      .where('tenant_id', '=', t.tenantId)
      .execute();
    expect(stored.map((m) => m.content).sort()).toEqual(['Likes tea', 'Prefers email']);
  });

  it('refuses the whole body only for what is not an item: no items, more than 500, an unknown field', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const item = { agent_id: 'agent-1', content: 'Likes tea' };
    for (const body of [{}, { items: [] }, { items: Array(501).fill(item) }, { items: [item], extra: 1 }]) {
      const res = await api.http.post('/v1/memories/batch').set(t.auth).send(body);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/problem\+json/);
    }
    const readOnly = await newKey(api, t, ['read']);
    const res = await api.http
      .post('/v1/memories/batch')
      .set(readOnly.auth)
      .send({ items: [item] });
    expect(res.status).toBe(403);
  });

  it('takes 500 items at the content limit, over BODY_LIMIT_BYTES', async () => {
    const api = await testApi({ config: { CONTENT_LIMIT_CHARS: '400', BODY_LIMIT_BYTES: '65536' } });
    const t = await newTenant(api);
    const items = Array.from({ length: 500 }, (_, i) => ({
      agent_id: 'agent-1',
      content: `Fact number ${i} ${'é'.repeat(380)}`.slice(0, 400),
      anchor_external_id: `s-${i % 10}`,
    }));
    const results = await batch(api, t.auth, items);
    expect(results.every((r) => r.outcome === 'created')).toBe(true);
    const single = await api.http
      .post('/v1/memories')
      .set(t.auth)
      .send({ agent_id: 'agent-1', content: 'y'.repeat(400), metadata: { pad: 'z'.repeat(70_000) } });
    expect(single.status).toBe(413);
  });

  it('stores a fact given twice in one batch once, and reinforces it once', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const fact = { agent_id: 'agent-1', content: 'Prefers window seats', anchor_external_id: 'bob' };
    const results = await batch(api, t.auth, [fact, { ...fact, content: ' prefers WINDOW seats. ' }]);
    expect(results.map((r) => r.outcome)).toEqual(['created', 'reinforced']);
    expect(results[1]?.memory?.id).toBe(results[0]?.memory?.id);
    expect(results[1]?.memory?.reinforcement_count).toBe(1);
    const rows = await api.core.db
      .selectFrom('memories')
      .select(['reinforcement_count'])
      .where('tenant_id', '=', t.tenantId)
      .execute();
    expect(rows).toEqual([{ reinforcement_count: 1 }]);
  });

  it('keeps no memory text in process once a batch or a store is over (the detector parses afresh)', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const lives = (city: string) => ({ agent_id: 'agent-1', content: `Lives in ${city}`, anchor_external_id: 'carol' });
    const results = await batch(api, t.auth, [lives('Paris'), lives('Berlin')]);
    expect(results.map((r) => r.outcome)).toEqual(['created', 'created']);
    expect(results[1]?.memory?.supersedes?.length).toBe(1);
    expect(parsedStatementsKept()).toBe(0);
    const res = await api.http.post('/v1/memories').set(t.auth).send(lives('Rome'));
    expect(res.status).toBe(201);
    expect(parsedStatementsKept()).toBe(0);
  });

  it('keeps each subject’s memories apart in a batch across many subjects', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const subjects = Array.from({ length: 25 }, (_, i) => `customer-${i}`);
    // The same facts for every subject, interleaved: each is its subject's own, created once.
    const items = ['Lives in Paris', 'Prefers email', 'Has a dog named Rex'].flatMap((content, k) =>
      subjects.map((s, i) => ({
        agent_id: 'agent-1',
        content: k === 0 && i % 2 === 1 ? 'Lives in Berlin' : content,
        anchor_external_id: s,
      })),
    );
    items.push({ agent_id: 'agent-1', content: 'Lives in Rome', anchor_external_id: 'customer-0' });
    const results = await batch(api, t.auth, items);
    expect(results.map((r) => r.outcome)).toEqual(items.map(() => 'created'));
    expect(results.every((r, i) => r.memory?.anchor_external_id === items[i]?.anchor_external_id)).toBe(true);
    // Rome superseded customer-0's Paris, and nothing of another subject.
    expect(results.at(-1)?.memory?.supersedes).toEqual([results[0]?.memory?.id]);
    for (const [i, s] of subjects.entries()) {
      const res = await api.http.get('/v1/anchors').query({ anchor_external_id: s }).set(t.auth);
      const anchorId = (res.body as { anchors: { id: string }[] }).anchors[0]?.id ?? '';
      const profile = await api.http.get(`/v1/anchors/${anchorId}/memories`).set(t.auth);
      const contents = (profile.body as { memories: { content: string }[] }).memories.map((m) => m.content).sort();
      const city = i === 0 ? 'Lives in Rome' : i % 2 === 1 ? 'Lives in Berlin' : 'Lives in Paris';
      expect(contents).toEqual([city, 'Has a dog named Rex', 'Prefers email'].sort());
    }
  });

  it('gives the same memories, audit events and outcomes as the items stored one by one', async () => {
    const api = await testApi();
    const one = await newTenant(api);
    const many = await newTenant(api);
    const script = (sessions: string[]) => [
      { agent_id: 'agent-1', content: 'Prefers email' },
      { agent_id: 'agent-1', content: 'Lives in Paris', anchor_external_id: 'carol' },
      { agent_id: 'agent-2', content: 'Likes jazz', session_id: sessions[0] },
      { agent_id: 'agent-1', content: 'Likes jazz', session_id: sessions[0] },
      { agent_id: 'agent-1', content: 'Likes jazz', session_id: sessions[1] },
      { agent_id: 'agent-1', content: 'Lives in Berlin', anchor_external_id: 'carol', metadata: { source: 'crm' } },
      { agent_id: 'agent-1', content: 'Likes jazz', session_id: sessions[1] },
      { agent_id: 'agent-1', content: 'The renovation budget is 5000 dollars', session_id: sessions[0] },
      { agent_id: 'agent-1', content: 'The renovation budget is 8000 dollars', session_id: sessions[1] },
      { agent_id: 'agent-1', content: 'Prefers email' },
      { agent_id: 'agent-1', content: 'Works at Acme', session_id: sessions[2] },
      { agent_id: 'agent-1', content: 'Works at Acme', anchor_external_id: 'carol', session_id: sessions[1] },
      { agent_id: 'agent-1', content: 'Works at Acme', session_id: sessions[2] },
      { agent_id: 'agent-1', content: 'Lives in Paris', anchor_external_id: 'dave' },
      { agent_id: 'agent-1', content: 'Owns a boat', session_id: sessions[3] },
      { agent_id: 'agent-1', content: 'Owns a red boat', session_id: sessions[3] },
    ];
    const sessionsOf = async (t: Tenant) => {
      const carol = await api.http.post('/v1/anchors').set(t.auth).send({ anchor_external_id: 'carol' });
      const carolId = (carol.body as { id: string }).id;
      return [
        await startSession(api, t.auth, { agent_id: 'agent-1', anchor_id: carolId }),
        await startSession(api, t.auth, { agent_id: 'agent-1', anchor_id: carolId }),
        await startSession(api, t.auth, { agent_id: 'agent-1', anchor_id: carolId }),
        await startSession(api, t.auth, { agent_id: 'agent-1' }),
      ];
    };
    const singly: string[] = [];
    const oneSessions = await sessionsOf(one);
    const manySessions = await sessionsOf(many);
    for (const item of script(oneSessions)) {
      const res = await api.http.post('/v1/memories').set(one.auth).send(item);
      singly.push((res.body as { outcome: string }).outcome);
    }
    const batched = await batch(api, many.auth, script(manySessions));
    expect(batched.map((r) => r.outcome)).toEqual(singly);
    expect(singly).toContain('promoted');
    expect(singly).toContain('reinforced');
    const a = await snapshot(api, one, oneSessions);
    const b = await snapshot(api, many, manySessions);
    expect(b.memories).toEqual(a.memories);
    expect(b.events).toEqual(a.events);
    expect(a.events.map((e) => e.action)).toEqual(expect.arrayContaining(['superseded', 'promoted', 'merged']));
  });

  it('stays equal to one-by-one stores when new facts and interacting ones are mixed in a subject', async () => {
    // The set-based path (batch-group.ts) writes the new facts together and hands the others to
    // the ordered store: a supersession of a stored memory, a reinforcement by an earlier item,
    // a promotion across sessions, a pinned contradiction, near-duplicates, speakers, expiry.
    const api = await testApi();
    const one = await newTenant(api);
    const many = await newTenant(api);
    const fillers = (tag: string, n: number) =>
      Array.from({ length: n }, (_, i) => ({
        agent_id: 'agent-1',
        content: `Talked about ${['gardening', 'sailing', 'chess', 'baking', 'cycling'][i % 5]} ${tag} ${'x'.repeat(i)}`,
        anchor_external_id: 'erin',
      }));
    const before = (sessions: string[]) => [
      { agent_id: 'agent-1', content: 'Lives in Paris', anchor_external_id: 'erin' },
      {
        agent_id: 'agent-1',
        content: 'The renovation budget is 5000 dollars',
        anchor_external_id: 'erin',
        pinned: true,
      },
      { agent_id: 'agent-1', content: 'Works at Acme', session_id: sessions[0] },
    ];
    const script = (sessions: string[]) => [
      ...fillers('early', 6),
      { agent_id: 'agent-1', content: 'Has a cat named Tom', anchor_external_id: 'erin' },
      { agent_id: 'agent-1', content: 'Lives in Lisbon', anchor_external_id: 'erin' },
      ...fillers('after-lisbon', 4),
      { agent_id: 'agent-1', content: 'lives in Lisbon.', anchor_external_id: 'erin' },
      { agent_id: 'agent-1', content: 'has a cat named tom!', anchor_external_id: 'erin' },
      { agent_id: 'agent-1', content: 'The renovation budget is 8000 dollars', anchor_external_id: 'erin' },
      { agent_id: 'agent-1', content: 'Likes jazz', session_id: sessions[0] },
      { agent_id: 'agent-1', content: 'Reads novels', session_id: sessions[0], expires_at: '2099-01-01T00:00:00Z' },
      { agent_id: 'agent-1', content: 'Likes jazz', session_id: sessions[1] },
      { agent_id: 'agent-1', content: 'Walks the dog', session_id: sessions[1] },
      { agent_id: 'agent-1', content: 'Likes jazz', session_id: sessions[0] },
      { agent_id: 'agent-1', content: 'Works at Acme', session_id: sessions[1] },
      { agent_id: 'agent-1', content: 'Works at Acme', anchor_external_id: 'erin' },
      { agent_id: 'agent-1', content: 'Works at Acme', session_id: sessions[0] },
      ...fillers('between', 3),
      { agent_id: 'agent-1', content: 'Likes jazz', session_id: sessions[1] },
      // Promoted by the ordered store just before: the profile's read must be taken again.
      { agent_id: 'agent-1', content: 'likes jazz', anchor_external_id: 'erin' },
      { agent_id: 'agent-1', content: 'I like hiking', anchor_external_id: 'erin', metadata: { speaker: 'user' } },
      { agent_id: 'agent-1', content: 'I like hiking', anchor_external_id: 'erin', metadata: { speaker: 'assistant' } },
      { agent_id: 'agent-1', content: 'I like hiking', anchor_external_id: 'erin', metadata: { speaker: 'user' } },
      { agent_id: 'agent-1', content: 'Owns a boat', session_id: sessions[2] },
      { agent_id: 'agent-1', content: 'Owns a red boat', session_id: sessions[2] },
      { agent_id: 'agent-1', content: 'Owns a boat', session_id: sessions[2] },
      ...fillers('late', 5),
      { agent_id: 'agent-2', content: 'Prefers email' },
      { agent_id: 'agent-2', content: 'Prefers email' },
    ];
    const sessionsOf = async (t: Tenant) => {
      const erin = await api.http.post('/v1/anchors').set(t.auth).send({ anchor_external_id: 'erin' });
      const erinId = (erin.body as { id: string }).id;
      return [
        await startSession(api, t.auth, { agent_id: 'agent-1', anchor_id: erinId }),
        await startSession(api, t.auth, { agent_id: 'agent-1', anchor_id: erinId }),
        await startSession(api, t.auth, { agent_id: 'agent-1' }),
      ];
    };
    const oneSessions = await sessionsOf(one);
    const manySessions = await sessionsOf(many);
    for (const [t, sessions] of [
      [one, oneSessions],
      [many, manySessions],
    ] as const) {
      for (const item of before(sessions)) {
        const res = await api.http.post('/v1/memories').set(t.auth).send(item);
        expect(res.status).toBe(201);
      }
    }
    const singly: string[] = [];
    for (const item of script(oneSessions)) {
      const res = await api.http.post('/v1/memories').set(one.auth).send(item);
      singly.push((res.body as { outcome: string }).outcome);
    }
    const batched = await batch(api, many.auth, script(manySessions));
    expect(batched.map((r) => r.outcome)).toEqual(singly);
    expect(singly).toEqual(expect.arrayContaining(['created', 'reinforced', 'promoted']));
    const a = await snapshot(api, one, oneSessions);
    const b = await snapshot(api, many, manySessions);
    expect(b.memories).toEqual(a.memories);
    expect(b.events).toEqual(a.events);
    expect(a.events.map((e) => e.action)).toEqual(expect.arrayContaining(['superseded', 'promoted', 'merged']));
    // The pinned budget stays active and is named as contradicted, in the batch as alone.
    const budget = batched.find((r) => r.memory?.content === 'The renovation budget is 8000 dollars');
    expect(budget?.memory).toMatchObject({ contradicts: [expect.any(String)] });
  });
});
