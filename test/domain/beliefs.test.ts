import request from 'supertest';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createApp } from '../../src/app.js';
import type { Core } from '../../src/domain/core.js';
import { engine, manualClock, newTenant, testApi, type TestApi, type Tenant } from '../helpers/harness.js';
import { sweepingApi } from '../helpers/isolated-db.js';
import { recall, startSession } from '../helpers/store-recall.js';

const DAY = 86_400_000;

interface Stored {
  /** The HTTP status; the memory's own `status` is left out of this view. */
  http: number;
  id: string;
  outcome: string;
  binding: string;
  confidence: number;
  reinforcement_count: number;
  supersedes?: string[];
}

async function store(api: TestApi, t: Tenant, body: Record<string, unknown>): Promise<Stored> {
  // The HTTP status is kept as `http`, apart from the memory's own `status` field.
  const res = await api.http
    .post('/v1/memories')
    .set(t.auth)
    .send({ agent_id: 'agent-1', ...body });
  if (res.status !== 200 && res.status !== 201) throw new Error(`store: ${res.status} ${JSON.stringify(res.body)}`);
  return { ...(res.body as Omit<Stored, 'http'>), http: res.status };
}

async function getMemory(api: TestApi, t: Tenant, id: string) {
  const res = await api.http.get(`/v1/memories/${id}`).set(t.auth);
  expect(res.status).toBe(200);
  return res.body as { status: string; superseded_by: string | null; effective_confidence: number; binding: string };
}

describe(`reinforcement on ${engine}`, () => {
  it('reinforces the same normalized content in the same partition instead of inserting', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const first = await store(api, t, { content: 'Alice prefers email', anchor_external_id: 'alice' });
    expect(first).toMatchObject({ http: 201, outcome: 'created', confidence: 0.7, reinforcement_count: 0 });
    const again = await store(api, t, { content: '  alice PREFERS email. ', anchor_external_id: 'alice' });
    expect(again).toMatchObject({ http: 200, outcome: 'reinforced', id: first.id, reinforcement_count: 1 });
    expect(again.confidence).toBeCloseTo(0.7 + 0.15 * 0.3, 10);
    const third = await store(api, t, { content: 'Alice prefers email', anchor_external_id: 'alice' });
    expect(third.confidence).toBeCloseTo(0.745 + 0.15 * (1 - 0.745), 10);
    expect(third.reinforcement_count).toBe(2);
  });

  it('reinforces a near-identical memory under the active embedder', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const first = await store(api, t, {
      content: 'The customer prefers email for every single contact about the invoices',
    });
    const near = await store(api, t, { content: 'The customer prefers email for every contact about the invoices' });
    expect(near).toMatchObject({ http: 200, outcome: 'reinforced', id: first.id });
  });

  it('takes the near-duplicate threshold from the embedder, not from its id', async () => {
    const base = await testApi();
    // The hash embedder's own vectors, under a model that counts only closer pairs as one memory.
    const core: Core = { ...base.core, embedder: { ...base.core.embedder, nearDuplicateThreshold: 0.99 } };
    const app = createApp(core);
    const api: TestApi = { app, core, http: request(app) };
    const t = await newTenant(api);
    const first = await store(api, t, {
      content: 'The customer prefers email for every single contact about the invoices',
    });
    const near = await store(api, t, { content: 'The customer prefers email for every contact about the invoices' });
    expect(near).toMatchObject({ http: 201, outcome: 'created' });
    expect(near.id).not.toBe(first.id);
  });

  it('never reinforces across partitions', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const fact = 'Allergic to peanuts';
    const a = await store(api, t, { content: fact, anchor_external_id: 'a' });
    const b = await store(api, t, { content: fact, anchor_external_id: 'b' });
    const mine = await store(api, t, { content: fact });
    const theirs = await store(api, t, { content: fact, agent_id: 'agent-2' });
    const ids = new Set([a.id, b.id, mine.id, theirs.id]);
    expect(ids.size).toBe(4);
    expect([a, b, mine, theirs].map((m) => m.outcome)).toEqual(['created', 'created', 'created', 'created']);
  });

  it('does not take a different value for a duplicate, however similar the texts', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const five = await store(api, t, { content: 'The renovation budget is 5000 dollars', anchor_external_id: 'x' });
    const eight = await store(api, t, { content: 'The renovation budget is 8000 dollars', anchor_external_id: 'x' });
    expect(eight.http).toBe(201);
    expect(eight.id).not.toBe(five.id);
  });
});

describe(`contradiction and supersession on ${engine}`, () => {
  it('supersedes a contradicted memory of the same partition and hides it from recall', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const paris = await store(api, t, { content: 'Lives in Paris', anchor_external_id: 'c1' });
    const berlin = await store(api, t, { content: 'Lives in Berlin', anchor_external_id: 'c1' });
    expect(berlin).toMatchObject({ http: 201, outcome: 'created', supersedes: [paris.id] });
    expect(await getMemory(api, t, paris.id)).toMatchObject({ status: 'superseded', superseded_by: berlin.id });

    const query = { agent_id: 'agent-1', anchor_external_id: 'c1', query: 'where does the customer live' };
    expect((await recall(api, t.auth, query)).map((r) => r.id)).toEqual([berlin.id]);
    const all = await recall(api, t.auth, { ...query, include_superseded: 'true' });
    expect(all.map((r) => r.id).sort()).toEqual([paris.id, berlin.id].sort());

    const history = await api.http.get(`/v1/memories/${paris.id}/history`).set(t.auth);
    expect((history.body as { events: { action: string }[] }).events.map((e) => e.action)).toEqual([
      'created',
      'superseded',
    ]);
  });

  it('keeps compatible facts side by side', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const tea = await store(api, t, { content: 'Likes tea', anchor_external_id: 'c2' });
    const coffee = await store(api, t, { content: 'Likes coffee', anchor_external_id: 'c2' });
    expect(coffee.supersedes).toBeUndefined();
    expect((await getMemory(api, t, tea.id)).status).toBe('active');
  });

  it('never supersedes a memory of another partition', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const paris = await store(api, t, { content: 'Lives in Paris', anchor_external_id: 'p1' });
    const privateParis = await store(api, t, { content: 'Lives in Paris' });
    await store(api, t, { content: 'Lives in Berlin', anchor_external_id: 'p2' });
    await store(api, t, { content: 'Lives in Berlin', agent_id: 'agent-2' });
    expect((await getMemory(api, t, paris.id)).status).toBe('active');
    expect((await getMemory(api, t, privateParis.id)).status).toBe('active');
  });

  it('leaves canon alone: it is never reinforced or superseded', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const canon = await api.http
      .post('/v1/canon')
      .set(t.auth)
      .send({ agent_id: 'admin', content: 'Office is in Paris' });
    const stored = await store(api, t, { content: 'Office is in Berlin' });
    expect(stored.supersedes).toBeUndefined();
    const entry = await api.http.get(`/v1/memories/${(canon.body as { id: string }).id}`).set(t.auth);
    expect(entry.body).toMatchObject({ status: 'active', reinforcement_count: 0, confidence: 1 });
  });
});

describe(`speakers on ${engine}`, () => {
  // "I" is whoever says it: two people's statements are two memories however alike their words.
  const near = [
    'I love the store and I am so proud of every single thing we built there',
    'I love the store and I am so proud of every thing we built there',
  ] as const;

  it('reinforces a near-identical statement of the same speaker, by label or by metadata', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const first = await store(api, t, { content: `Jon: ${near[0]}`, anchor_external_id: 'chat' });
    const again = await store(api, t, { content: `Jon: ${near[1]}`, anchor_external_id: 'chat' });
    expect(again).toMatchObject({ http: 200, outcome: 'reinforced', id: first.id });
    const byField = await store(api, t, { content: near[0], metadata: { speaker: 'Gina' }, anchor_external_id: 'x' });
    const sameField = await store(api, t, { content: near[1], metadata: { speaker: 'gina' }, anchor_external_id: 'x' });
    expect(sameField).toMatchObject({ http: 200, outcome: 'reinforced', id: byField.id });
  });

  it("never merges one speaker's statement into another's", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const jon = await store(api, t, { content: `Jon: ${near[0]}`, anchor_external_id: 'chat' });
    const gina = await store(api, t, { content: `Gina: ${near[1]}`, anchor_external_id: 'chat' });
    expect(gina).toMatchObject({ http: 201, outcome: 'created' });
    expect(gina.id).not.toBe(jon.id);
    // The same text, told apart by metadata alone.
    const a = await store(api, t, { content: near[0], metadata: { speaker: 'Jon' }, anchor_external_id: 'x' });
    const b = await store(api, t, { content: near[0], metadata: { speaker: 'Gina' }, anchor_external_id: 'x' });
    expect(b).toMatchObject({ http: 201, outcome: 'created' });
    expect(b.id).not.toBe(a.id);
    // A memory that names no speaker may still be anyone's.
    const anyone = await store(api, t, { content: near[1], anchor_external_id: 'x' });
    expect(anyone).toMatchObject({ http: 200, outcome: 'reinforced' });
  });

  it("does not supersede another speaker's statement", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const jon = await store(api, t, {
      content: 'Lives in Paris',
      metadata: { speaker: 'Jon' },
      anchor_external_id: 'c',
    });
    const gina = await store(api, t, {
      content: 'Lives in Berlin',
      metadata: { speaker: 'Gina' },
      anchor_external_id: 'c',
    });
    expect(gina).toMatchObject({ http: 201, outcome: 'created' });
    expect(gina.supersedes).toBeUndefined();
    expect(await getMemory(api, t, jon.id)).toMatchObject({ status: 'active' });
    const moved = await store(api, t, {
      content: 'Lives in Rome',
      metadata: { speaker: 'Jon' },
      anchor_external_id: 'c',
    });
    expect(moved.supersedes).toEqual([jon.id]);
  });

  it("does not reinforce the profile's copy of what another speaker said", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const fact = 'Takes the bus to work';
    const profile = await store(api, t, { content: fact, metadata: { speaker: 'Pat' }, anchor_external_id: 'pat' });
    const s = await startSession(api, t.auth, { agent_id: 'agent-1', anchor_external_id: 'pat' });
    const other = await store(api, t, { content: fact, metadata: { speaker: 'Sam' }, session_id: s });
    expect(other).toMatchObject({ http: 201, outcome: 'created', binding: 'session' });
    const same = await store(api, t, { content: fact, metadata: { speaker: 'Pat' }, session_id: s });
    expect(same).toMatchObject({ http: 200, outcome: 'reinforced', id: profile.id, binding: 'anchored' });
  });
});

describe(`promotion on ${engine}`, () => {
  it('promotes a session memory reinforced 3 times for its anchor, across sessions', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const s1 = await startSession(api, t.auth, { agent_id: 'agent-1', anchor_external_id: 'pat' });
    const s2 = await startSession(api, t.auth, { agent_id: 'agent-1', anchor_external_id: 'pat' });
    const fact = 'Takes the bus to work';
    const first = await store(api, t, { content: fact, session_id: s1 });
    expect(first).toMatchObject({ http: 201, binding: 'session' });
    expect((await store(api, t, { content: fact, session_id: s2 })).outcome).toBe('reinforced');
    expect((await store(api, t, { content: fact, session_id: s1 })).outcome).toBe('reinforced');
    const promoted = await store(api, t, { content: fact, session_id: s2 });
    expect(promoted).toMatchObject({ http: 200, outcome: 'promoted', id: first.id, binding: 'anchored' });

    const anchors = await api.http.get('/v1/anchors').set(t.auth).query({ anchor_external_id: 'pat' });
    const anchorId = (anchors.body as { anchors: { id: string }[] }).anchors[0]?.id;
    const profile = await api.http.get(`/v1/anchors/${anchorId}/memories`).set(t.auth);
    expect((profile.body as { memories: { id: string }[] }).memories.map((m) => m.id)).toEqual([first.id]);
    const history = await api.http.get(`/v1/memories/${first.id}/history`).set(t.auth);
    expect((history.body as { events: { action: string }[] }).events.map((e) => e.action)).toEqual([
      'created',
      'reinforced',
      'reinforced',
      'reinforced',
      'promoted',
    ]);
  });

  it('does not promote the memories of a session without a subject', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const s = await startSession(api, t.auth, { agent_id: 'agent-1' });
    let last: Stored | undefined;
    for (let i = 0; i < 4; i++) last = await store(api, t, { content: 'Wants a window seat', session_id: s });
    expect(last).toMatchObject({ outcome: 'reinforced', binding: 'session', reinforcement_count: 3 });
  });
});

describe(`decay and expiry on ${engine}, by moving the clock`, () => {
  it('decays effective confidence per binding and resets it on reinforcement', async () => {
    const clock = manualClock();
    const api = await testApi({ clock });
    const t = await newTenant(api);
    const s = await startSession(api, t.auth, { agent_id: 'agent-1' });
    const priv = await store(api, t, { content: 'Private note' });
    const anchored = await store(api, t, { content: 'Anchored note', anchor_external_id: 'd' });
    const session = await store(api, t, { content: 'Session note', session_id: s });
    const canon = await api.http.post('/v1/canon').set(t.auth).send({ agent_id: 'admin', content: 'Canon note' });
    clock.advance(10 * DAY);
    expect((await getMemory(api, t, priv.id)).effective_confidence).toBeCloseTo(0.7 * Math.exp(-0.05 * 10), 10);
    expect((await getMemory(api, t, anchored.id)).effective_confidence).toBeCloseTo(0.7 * Math.exp(-0.02 * 10), 10);
    expect((await getMemory(api, t, session.id)).effective_confidence).toBeCloseTo(0.7 * Math.exp(-0.2 * 10), 10);
    const canonId = (canon.body as { id: string }).id;
    expect((await getMemory(api, t, canonId)).effective_confidence).toBeCloseTo(Math.exp(-0.01 * 10), 10);

    const again = await store(api, t, { content: 'Private note' });
    expect(again.outcome).toBe('reinforced');
    expect((await getMemory(api, t, priv.id)).effective_confidence).toBeCloseTo(0.745, 10);
  });

  it('deletes unpromoted session memories once the session has expired, and keeps promoted ones', async () => {
    const clock = manualClock();
    const { api, close } = await sweepingApi({ clock });
    onTestFinished(close);
    const t = await newTenant(api);
    const s = await startSession(api, t.auth, { agent_id: 'agent-1', anchor_external_id: 'e' });
    const fleeting = await store(api, t, { content: 'Is in a hurry today', session_id: s });
    let durable: Stored | undefined;
    for (let i = 0; i < 4; i++) durable = await store(api, t, { content: 'Is a vegetarian', session_id: s });
    expect(durable?.outcome).toBe('promoted');
    const ended = await api.http.post(`/v1/sessions/${s}/end`).set(t.auth);
    expect(ended.status).toBe(200);

    const { sweepExpiredSessions } = await import('../../src/domain/lifecycle/sweeper.js');
    clock.advance(23 * 3_600_000);
    expect((await sweepExpiredSessions(api.core)).leader).toBe(true);
    expect((await api.http.get(`/v1/memories/${fleeting.id}`).set(t.auth)).status).toBe(200);
    const query = { agent_id: 'agent-1', session_id: s, query: 'hurry' };
    expect((await recall(api, t.auth, query)).map((r) => r.id)).toContain(fleeting.id);

    clock.advance(2 * 3_600_000);
    // Past expiry, recall no longer shows it even before a sweep has run.
    expect((await recall(api, t.auth, query)).map((r) => r.id)).not.toContain(fleeting.id);
    await sweepExpiredSessions(api.core);
    expect((await api.http.get(`/v1/memories/${fleeting.id}`).set(t.auth)).status).toBe(404);
    expect((await getMemory(api, t, durable?.id ?? '')).binding).toBe('anchored');
    const history = await api.http.get(`/v1/memories/${fleeting.id}/history`).set(t.auth);
    expect((history.body as { events: { action: string }[] }).events.map((e) => e.action)).toEqual([
      'created',
      'expired',
    ]);
  });
});
