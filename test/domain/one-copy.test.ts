import { describe, expect, it, onTestFinished } from 'vitest';
import { sweepExpiredSessions } from '../../src/domain/lifecycle/sweeper.js';
import { engine, manualClock, newTenant, testApi, type TestApi, type Tenant } from '../helpers/harness.js';
import { sweepingApi } from '../helpers/isolated-db.js';
import { createAnchor, startSession } from '../helpers/store-recall.js';

const HOUR = 3_600_000;

interface Stored {
  id: string;
  outcome: string;
  binding: string;
  session_id: string | null;
  status: string;
  confidence: number;
  reinforcement_count: number;
  superseded_by: string | null;
}

async function store(api: TestApi, t: Tenant, body: Record<string, unknown>): Promise<Stored> {
  const res = await api.http
    .post('/v1/memories')
    .set(t.auth)
    .send({ agent_id: 'agent-1', ...body });
  if (res.status !== 200 && res.status !== 201) throw new Error(`store: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Stored;
}

async function memory(api: TestApi, t: Tenant, id: string): Promise<{ status: number; body: Stored }> {
  const res = await api.http.get(`/v1/memories/${id}`).set(t.auth);
  return { status: res.status, body: res.body as Stored };
}

async function profile(api: TestApi, t: Tenant, anchorId: string): Promise<Stored[]> {
  const res = await api.http.get(`/v1/anchors/${anchorId}/memories`).set(t.auth);
  expect(res.status).toBe(200);
  return (res.body as { memories: Stored[] }).memories;
}

async function history(api: TestApi, t: Tenant, id: string): Promise<{ action: string; changes: object }[]> {
  const res = await api.http.get(`/v1/memories/${id}/history`).set(t.auth);
  return (res.body as { events: { action: string; changes: object }[] }).events;
}

/** Every memory of the subject, any binding or status, straight from the table. */
async function everyMemoryOf(api: TestApi, t: Tenant, anchorId: string) {
  return api.core.db
    .selectFrom('memories')
    .select(['id', 'binding', 'status', 'content'])
    .where('tenant_id', '=', t.tenantId)
    .where('anchor_id', '=', anchorId)
    .execute();
}

describe(`one copy of each fact per subject on ${engine}`, () => {
  it('stores a fact once from each of 10 sessions: one anchored memory with 9 reinforcements', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const anchorId = await createAnchor(api, t.auth, 'ten-sessions');
    const outcomes: string[] = [];
    for (let i = 0; i < 10; i++) {
      const session = await startSession(api, t.auth, { agent_id: 'agent-1', anchor_id: anchorId });
      outcomes.push((await store(api, t, { content: 'Takes the train to work', session_id: session })).outcome);
    }
    expect(outcomes).toEqual([
      'created',
      'reinforced',
      'reinforced',
      'promoted',
      'reinforced',
      'reinforced',
      'reinforced',
      'reinforced',
      'reinforced',
      'reinforced',
    ]);
    expect(await everyMemoryOf(api, t, anchorId)).toHaveLength(1);
    const durable = await profile(api, t, anchorId);
    expect(durable).toHaveLength(1);
    expect(durable[0]).toMatchObject({ binding: 'anchored', reinforcement_count: 9 });
  });

  it('merges a session copy into its anchored twin, carrying its reinforcements over, audited', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const anchorId = await createAnchor(api, t.auth, 'merge');
    const s1 = await startSession(api, t.auth, { agent_id: 'agent-1', anchor_id: anchorId });
    const fact = 'Is allergic to cats';
    const copy = await store(api, t, { content: fact, session_id: s1 });
    await store(api, t, { content: fact, session_id: s1 });
    // Stored as durable directly: the anchored partition does not look at session copies.
    const twin = await store(api, t, { content: fact, anchor_id: anchorId });
    expect(twin).toMatchObject({ outcome: 'created', binding: 'anchored' });

    const s2 = await startSession(api, t.auth, { agent_id: 'agent-1', anchor_id: anchorId });
    const merged = await store(api, t, { content: fact, session_id: s2 });
    // The twin takes this store and the copy's two (its creation and one reinforcement).
    expect(merged).toMatchObject({ id: twin.id, outcome: 'reinforced', binding: 'anchored', reinforcement_count: 3 });
    expect(merged.confidence).toBeCloseTo(1 - 0.3 * 0.85 ** 3, 10);
    expect((await memory(api, t, copy.id)).body).toMatchObject({ status: 'superseded', superseded_by: twin.id });
    expect((await history(api, t, copy.id)).map((e) => e.action)).toEqual(['created', 'reinforced', 'merged']);
    expect((await history(api, t, copy.id)).at(-1)?.changes).toEqual({
      merged_into: twin.id,
      binding: 'session',
      reinforcement_count: 1,
    });
    expect((await history(api, t, twin.id)).at(-1)?.changes).toMatchObject({ merged_from: copy.id });
    expect((await profile(api, t, anchorId)).map((m) => m.id)).toEqual([twin.id]);

    // From now on the session store goes to the twin; no new session copy starts.
    const again = await store(api, t, { content: fact, session_id: s2 });
    expect(again).toMatchObject({ id: twin.id, reinforcement_count: 4 });
    const active = (await everyMemoryOf(api, t, anchorId)).filter((m) => m.status === 'active');
    expect(active.map((m) => m.id)).toEqual([twin.id]);
  });

  it('keeps a reinforced session memory in the session it was formed in, alive while a later session mentions it', async () => {
    const clock = manualClock();
    const { api, close } = await sweepingApi({ clock });
    onTestFinished(close);
    const t = await newTenant(api);
    const anchorId = await createAnchor(api, t.auth, 'provenance');
    const s1 = await startSession(api, t.auth, { agent_id: 'agent-1', anchor_id: anchorId });
    const fact = 'Is renovating the kitchen';
    const formed = await store(api, t, { content: fact, session_id: s1 });
    clock.advance(HOUR);
    const s2 = await startSession(api, t.auth, { agent_id: 'agent-1', anchor_id: anchorId });
    const again = await store(api, t, { content: fact, session_id: s2 });
    expect(again).toMatchObject({ id: formed.id, outcome: 'reinforced', session_id: s1 });

    await api.http.post(`/v1/sessions/${s1}/end`).set(t.auth).send({});
    clock.advance(25 * HOUR);
    await sweepExpiredSessions(api.core);
    // s1 has expired, but s2, which stored it again, has not.
    expect((await memory(api, t, formed.id)).body).toMatchObject({ binding: 'session', session_id: s1 });
    const third = await store(api, t, { content: fact, session_id: s2 });
    expect(third).toMatchObject({ id: formed.id, outcome: 'reinforced', reinforcement_count: 2 });

    await api.http.post(`/v1/sessions/${s2}/end`).set(t.auth).send({});
    clock.advance(23 * HOUR);
    await sweepExpiredSessions(api.core);
    expect((await memory(api, t, formed.id)).status).toBe(200);
    clock.advance(2 * HOUR);
    await sweepExpiredSessions(api.core);
    expect((await memory(api, t, formed.id)).status).toBe(404);
    expect((await history(api, t, formed.id)).map((e) => e.action)).toEqual([
      'created',
      'reinforced',
      'reinforced',
      'expired',
    ]);
  });

  it('lets a memory that only its own expired session mentioned go, even while other sessions of the subject live', async () => {
    const clock = manualClock();
    const { api, close } = await sweepingApi({ clock });
    onTestFinished(close);
    const t = await newTenant(api);
    const anchorId = await createAnchor(api, t.auth, 'unmentioned');
    const s1 = await startSession(api, t.auth, { agent_id: 'agent-1', anchor_id: anchorId });
    await startSession(api, t.auth, { agent_id: 'agent-1', anchor_id: anchorId });
    const fleeting = await store(api, t, { content: 'Is in a hurry today', session_id: s1 });
    await store(api, t, { content: 'Is in a hurry today', session_id: s1 });
    await api.http.post(`/v1/sessions/${s1}/end`).set(t.auth).send({});
    clock.advance(25 * HOUR);
    expect((await sweepExpiredSessions(api.core)).expired).toBeGreaterThanOrEqual(1);
    expect((await memory(api, t, fleeting.id)).status).toBe(404);
  });
});
