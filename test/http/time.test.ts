import { describe, expect, it, onTestFinished } from 'vitest';
import { effectiveConfidence } from '../../src/domain/lifecycle/decay.js';
import { sweepExpired } from '../../src/domain/lifecycle/sweeper.js';
import { DAY_MS } from '../../src/domain/time.js';
import { MemoryObject, StoredMemoryObject } from '../../src/schemas/objects.js';
import { engine, manualClock, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { sweepingApi } from '../helpers/isolated-db.js';
import { call, identityWithScopes, inProcessClient, ok, text } from '../helpers/mcp.js';
import { expectProblem } from '../helpers/problem.js';

type Stored = ReturnType<typeof StoredMemoryObject.parse>;
type Recalled = ReturnType<typeof MemoryObject.parse> & { score: number; score_details: { recency: number } };

const DAY0 = new Date('2026-03-01T00:00:00Z');
const day = (n: number) => new Date(DAY0.getTime() + n * DAY_MS).toISOString();

async function store(api: TestApi, t: Tenant, body: Record<string, unknown>): Promise<Stored> {
  const res = await api.http
    .post('/v1/memories')
    .set(t.auth)
    .send({ agent_id: 'a1', ...body });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return StoredMemoryObject.parse(res.body);
}

async function recall(api: TestApi, t: Tenant, query: Record<string, string>): Promise<Recalled[]> {
  const res = await api.http
    .get('/v1/memories/recall')
    .set(t.auth)
    .query({ agent_id: 'a1', ...query });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body as { results: Recalled[] }).results;
}

const ids = (results: { id: string }[]) => results.map((r) => r.id).sort();

describe(`recall as of a moment on ${engine}`, () => {
  it('answers with what was current then: superseded later, created later, confidence decayed to then', async () => {
    const clock = manualClock(DAY0);
    const api = await testApi({ clock });
    const t = await newTenant(api);
    const paris = await store(api, t, { content: 'Lives in Paris', anchor_external_id: 'c1' });
    clock.set(new Date(day(3)));
    const berlin = await store(api, t, { content: 'Lives in Berlin', anchor_external_id: 'c1' });
    expect(berlin.supersedes).toEqual([paris.id]);
    clock.set(new Date(day(5)));
    const tea = await store(api, t, { content: 'Likes green tea', anchor_external_id: 'c1' });
    clock.set(new Date(day(10)));

    const q = { anchor_external_id: 'c1', query: 'where does the customer live' };
    const day2 = await recall(api, t, { ...q, as_of: day(2) });
    expect(ids(day2)).toEqual([paris.id]);
    // Shown as it stands now: the caller sees that it has been superseded since.
    expect(day2[0]).toMatchObject({ status: 'superseded', superseded_by: berlin.id, superseded_at: day(3) });
    // Decayed from its storage on day 0 to day 2, not to today.
    const expected = effectiveConfidence(0.7, 0.02, DAY0, new Date(day(2)));
    expect(day2[0]?.effective_confidence).toBeCloseTo(expected, 12);

    const day4 = await recall(api, t, { ...q, as_of: day(4) });
    expect(ids(day4)).toEqual([berlin.id]);
    expect(day4.map((r) => r.id)).not.toContain(tea.id);
    expect(day4[0]?.effective_confidence).toBeCloseTo(
      effectiveConfidence(0.7, 0.02, new Date(day(3)), new Date(day(4))),
      12,
    );

    const now = await recall(api, t, q);
    expect(ids(now)).toEqual([berlin.id, tea.id].sort());
    // With superseded ones asked for, as of day 4 Paris comes back, marked.
    const all = await recall(api, t, { ...q, as_of: day(4), include_superseded: 'true' });
    expect(ids(all)).toEqual([paris.id, berlin.id].sort());
    expect(all.find((r) => r.id === paris.id)).toMatchObject({ superseded_by: berlin.id, superseded_at: day(3) });
  });

  it('refuses a moment in the future or not a date-time, naming as_of', async () => {
    const api = await testApi({ clock: manualClock(DAY0) });
    const t = await newTenant(api);
    const base = { agent_id: 'a1', query: 'anything' };
    for (const as_of of [day(1), 'yesterday']) {
      const res = await api.http
        .get('/v1/memories/recall')
        .set(t.auth)
        .query({ ...base, as_of });
      expectProblem(res, 400, 'invalid_request');
      expect(new Set(res.body.errors.map((e: { path: string }) => e.path))).toEqual(new Set(['as_of']));
    }
  });
});

describe(`expiry on ${engine}`, () => {
  it('hides a memory from recall, the lists and GET at its expiry, and the sweeper deletes it, audited', async () => {
    const clock = manualClock(DAY0);
    const { api, close } = await sweepingApi({ clock });
    onTestFinished(close);
    const t = await newTenant(api);
    const brief = await store(api, t, {
      content: 'Is in a meeting until three',
      anchor_external_id: 'c2',
      ttl_seconds: 1,
    });
    expect(brief.expires_at).toBe(new Date(DAY0.getTime() + 1000).toISOString());
    const kept = await store(api, t, { content: 'Prefers meetings in the morning', anchor_external_id: 'c2' });
    const q = { anchor_external_id: 'c2', query: 'meeting' };
    expect(ids(await recall(api, t, q))).toEqual([brief.id, kept.id].sort());

    clock.advance(1000);
    expect(ids(await recall(api, t, q))).toEqual([kept.id]);
    expectProblem(await api.http.get(`/v1/memories/${brief.id}`).set(t.auth), 404, 'not_found');
    const profile = await api.http.get(`/v1/anchors/${brief.anchor_id}/memories`).set(t.auth);
    expect(profile.body.memories.map((m: { id: string }) => m.id)).toEqual([kept.id]);
    // Nothing swept yet: the row is still there, only hidden.
    const history = await api.http.get(`/v1/memories/${brief.id}/history`).set(t.auth);
    expect(history.body.events.map((e: { action: string }) => e.action)).toEqual(['created']);

    expect((await sweepExpired(api.core)).expired).toBeGreaterThanOrEqual(1);
    const after = await api.http.get(`/v1/memories/${brief.id}/history`).set(t.auth);
    expect(after.body.events.at(-1)).toMatchObject({
      action: 'expired',
      memory_id: brief.id,
      actor: { key_id: null },
      changes: { binding: 'anchored' },
    });
    expect((await api.http.get(`/v1/memories/${kept.id}`).set(t.auth)).status).toBe(200);
  });

  it('is gone from recall one real second after ttl_seconds: 1', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const m = await store(api, t, { content: 'The door code is 4711 today', ttl_seconds: 1 });
    expect(ids(await recall(api, t, { query: 'door code' }))).toEqual([m.id]);
    await new Promise((r) => setTimeout(r, 1100));
    expect(await recall(api, t, { query: 'door code' })).toEqual([]);
  });

  it('takes expires_at or ttl_seconds, not both, and never a past expiry', async () => {
    const api = await testApi({ clock: manualClock(DAY0) });
    const t = await newTenant(api);
    const post = (body: Record<string, unknown>) =>
      api.http
        .post('/v1/memories')
        .set(t.auth)
        .send({ agent_id: 'a1', content: 'x', ...body });
    const both = await post({ expires_at: day(1), ttl_seconds: 5 });
    expectProblem(both, 400, 'invalid_request');
    expect(both.body.errors[0].path).toBe('ttl_seconds');
    const past = await post({ expires_at: day(-1) });
    expectProblem(past, 400, 'invalid_request');
    expect(past.body.errors[0].path).toBe('expires_at');
    expectProblem(await post({ ttl_seconds: 0 }), 400, 'invalid_request');
    expect((await store(api, t, { content: 'Until tomorrow', expires_at: day(1) })).expires_at).toBe(day(1));
  });

  it('a reinforcement never shortens a life: the later expiry, none (null) being the latest', async () => {
    const clock = manualClock(DAY0);
    const api = await testApi({ clock });
    const t = await newTenant(api);
    const first = await store(api, t, { content: 'Works from home this week', expires_at: day(7) });
    const sooner = await store(api, t, { content: 'Works from home this week', expires_at: day(2) });
    expect(sooner).toMatchObject({ id: first.id, outcome: 'reinforced', expires_at: day(7) });
    const silent = await store(api, t, { content: 'Works from home this week' });
    expect(silent).toMatchObject({ id: first.id, expires_at: day(7) });
    const never = await store(api, t, { content: 'Works from home this week', expires_at: null });
    expect(never).toMatchObject({ id: first.id, expires_at: null });
  });
});

describe(`pinning on ${engine}`, () => {
  it('a pinned memory does not decay, and a contradicting store leaves it active, named in contradicts', async () => {
    const clock = manualClock(DAY0);
    const api = await testApi({ clock });
    const t = await newTenant(api);
    const paris = await store(api, t, { content: 'Lives in Paris', anchor_external_id: 'c3', pinned: true });
    expect(paris.pinned).toBe(true);
    clock.set(new Date(day(30)));
    const berlin = await store(api, t, { content: 'Lives in Berlin', anchor_external_id: 'c3' });
    expect(berlin.outcome).toBe('created');
    expect(berlin.supersedes).toBeUndefined();
    expect(berlin.contradicts).toEqual([paris.id]);
    const got = MemoryObject.parse((await api.http.get(`/v1/memories/${paris.id}`).set(t.auth)).body);
    expect(got).toMatchObject({ status: 'active', pinned: true, effective_confidence: 0.7 });
    const results = await recall(api, t, { anchor_external_id: 'c3', query: 'where does the customer live' });
    expect(ids(results)).toEqual([paris.id, berlin.id].sort());
    const events = await api.http.get(`/v1/memories/${berlin.id}/history`).set(t.auth);
    expect(events.body.events[0]).toMatchObject({ action: 'created', changes: { contradicts: [paris.id] } });
  });

  it('a pinned session memory survives its session end and expiry, in recall and the sweep', async () => {
    const clock = manualClock(DAY0);
    const { api, close } = await sweepingApi({ clock });
    onTestFinished(close);
    const t = await newTenant(api);
    const session = await api.http.post('/v1/sessions').set(t.auth).send({ agent_id: 'a1' });
    const sid = session.body.id as string;
    const pinned = await store(api, t, { content: 'The ticket number is 5521', session_id: sid, pinned: true });
    const loose = await store(api, t, { content: 'The ticket was opened by phone', session_id: sid });
    await api.http.post(`/v1/sessions/${sid}/end`).set(t.auth);
    clock.set(new Date(day(3)));
    expect(ids(await recall(api, t, { session_id: sid, query: 'ticket' }))).toEqual([pinned.id]);
    await sweepExpired(api.core);
    expect((await api.http.get(`/v1/memories/${pinned.id}`).set(t.auth)).status).toBe(200);
    expect((await api.http.get(`/v1/memories/${loose.id}`).set(t.auth)).status).toBe(404);
  });

  it('PATCH pins, unpins and sets or clears the expiry in place, audited; a pinned memory outlives its expiry', async () => {
    const clock = manualClock(DAY0);
    const { api, close } = await sweepingApi({ clock });
    onTestFinished(close);
    const t = await newTenant(api);
    const m = await store(api, t, { content: 'Allergic to penicillin', anchor_external_id: 'c4', ttl_seconds: 60 });
    const patch = (body: Record<string, unknown>) => api.http.patch(`/v1/memories/${m.id}`).set(t.auth).send(body);
    const pinned = await patch({ pinned: true });
    expect(pinned.status).toBe(200);
    expect(MemoryObject.strict().parse(pinned.body)).toMatchObject({ id: m.id, pinned: true, content: m.content });
    clock.advance(120_000);
    expect(ids(await recall(api, t, { anchor_external_id: 'c4', query: 'allergy penicillin' }))).toEqual([m.id]);
    await sweepExpired(api.core);
    expect((await api.http.get(`/v1/memories/${m.id}`).set(t.auth)).status).toBe(200);

    const cleared = await patch({ expires_at: null, pinned: false });
    expect(cleared.body).toMatchObject({ pinned: false, expires_at: null });
    const later = await patch({ ttl_seconds: 30 });
    expect(later.body.expires_at).toBe(new Date(clock().getTime() + 30_000).toISOString());
    const history = await api.http.get(`/v1/memories/${m.id}/history`).set(t.auth);
    expect(history.body.events.map((e: { action: string }) => e.action)).toEqual([
      'created',
      'updated',
      'updated',
      'updated',
    ]);
    expect(history.body.events[1].changes).toEqual({ binding: 'anchored', pinned_before: false, pinned: true });

    expectProblem(await patch({}), 400, 'invalid_request');
    expectProblem(await patch({ metadata: { a: 1 } }), 400, 'invalid_request');
  });

  it('canon cannot expire', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const canon = await api.http.post('/v1/canon').set(t.auth).send({ agent_id: 'a1', content: 'Never share keys' });
    expect(canon.status).toBe(201);
    const res = await api.http.patch(`/v1/memories/${canon.body.id}`).set(t.auth).send({ ttl_seconds: 60 });
    expectProblem(res, 409, 'conflict');
  });
});

describe(`event time on ${engine}`, () => {
  it('a store keeps occurred_at, an ingest takes it from the messages, and recency counts from it', async () => {
    const clock = manualClock(DAY0);
    const api = await testApi({ clock });
    const t = await newTenant(api);
    const said = await store(api, t, { content: 'Moved to Lisbon', occurred_at: '2025-06-01T10:00:00Z' });
    expect(said).toMatchObject({ occurred_at: '2025-06-01T10:00:00.000Z', created_at: DAY0.toISOString() });
    const plain = await store(api, t, { content: 'Likes jazz' });
    expect(plain.occurred_at).toBe(DAY0.toISOString());

    const ingest = await api.http
      .post('/v1/agents/a1/conversations/ingest')
      .set(t.auth)
      .send({
        anchor_external_id: 'c5',
        messages: [{ role: 'user', content: 'I prefer tea over coffee.', created_at: '2025-12-24T08:00:00Z' }],
      });
    expect(ingest.status, JSON.stringify(ingest.body)).toBe(200);
    const memories = ingest.body.memories as Stored[];
    expect(memories.length).toBeGreaterThan(0);
    for (const m of memories) expect(m.occurred_at).toBe('2025-12-24T08:00:00.000Z');
    const fresh = await store(api, t, { content: 'Drinks coffee on Mondays', anchor_external_id: 'c5' });
    const recalled = await recall(api, t, { anchor_external_id: 'c5', query: 'tea coffee' });
    const recency = (id: string) => recalled.find((r) => r.id === id)?.score_details.recency;
    // Stored today but said months ago: no recency boost left; said today: the full boost.
    expect(recency(memories[0]?.id ?? '')).toBeLessThan(1.001);
    expect(recency(fresh.id)).toBeCloseTo(1.1, 6);
  });
});

describe(`changed_since on the lists on ${engine}`, () => {
  it('lists what was created, reinforced, superseded or corrected since a time, superseded ones marked', async () => {
    const clock = manualClock(DAY0);
    const api = await testApi({ clock });
    const t = await newTenant(api);
    const paris = await store(api, t, { content: 'Lives in Paris', anchor_external_id: 'c6' });
    const tea = await store(api, t, { content: 'Likes green tea', anchor_external_id: 'c6' });
    const jazz = await store(api, t, { content: 'Listens to jazz', anchor_external_id: 'c6' });
    clock.set(new Date(day(2)));
    const berlin = await store(api, t, { content: 'Lives in Berlin', anchor_external_id: 'c6' });
    await store(api, t, { content: 'Likes green tea', anchor_external_id: 'c6' });
    const list = async (since: string) => {
      const res = await api.http
        .get(`/v1/anchors/${paris.anchor_id}/memories`)
        .set(t.auth)
        .query({ changed_since: since });
      expect(res.status).toBe(200);
      return res.body.memories as { id: string; status: string; superseded_by: string | null }[];
    };
    const changed = await list(day(1));
    expect(ids(changed)).toEqual([paris.id, tea.id, berlin.id].sort());
    expect(changed.find((m) => m.id === paris.id)).toMatchObject({ status: 'superseded', superseded_by: berlin.id });
    expect(ids(await list(day(0)))).toEqual([paris.id, tea.id, jazz.id, berlin.id].sort());
    expect(await list(day(3))).toEqual([]);

    const session = await api.http.post('/v1/sessions').set(t.auth).send({ agent_id: 'a1' });
    const note = await store(api, t, { content: 'Called about the invoice', session_id: session.body.id });
    const res = await api.http
      .get(`/v1/sessions/${session.body.id}/memories`)
      .set(t.auth)
      .query({ changed_since: day(3) });
    expect(ids(res.body.memories)).toEqual([]);
    const all = await api.http
      .get(`/v1/sessions/${session.body.id}/memories`)
      .set(t.auth)
      .query({ changed_since: day(2) });
    expect(ids(all.body.memories)).toEqual([note.id]);
    const bad = await api.http.get(`/v1/anchors/${paris.anchor_id}/memories`).set(t.auth).query({ changed_since: 'x' });
    expectProblem(bad, 400, 'invalid_request');
  });
});

describe(`time, expiry and pins through MCP on ${engine}`, () => {
  it('remember takes ttl_seconds and pinned, recall takes as_of and include_superseded', async () => {
    const clock = manualClock(DAY0);
    const api = await testApi({ clock });
    const t = await newTenant(api);
    const identity = await identityWithScopes(api, t, ['read', 'write'], 'a1');
    const { client, close } = await inProcessClient(api.core, identity);
    try {
      const brief = await ok(client, 'remember', { content: 'Is on a call right now', subject: 'c7', ttl_seconds: 1 });
      const paris = await ok(client, 'remember', { content: 'Lives in Paris', subject: 'c7', pinned: true });
      expect(paris).toMatchObject({ pinned: true, effective_confidence: 0.7 });
      clock.set(new Date(day(2)));
      const contradiction = await call(client, 'remember', { content: 'Lives in Berlin', subject: 'c7' });
      expect(text(contradiction)).toMatch(/contradicts pinned memory/);
      expect(contradiction.structuredContent).toMatchObject({ contradicts: [paris.id] });

      const now = await ok(client, 'recall', {
        query: 'where does the customer live or what is she doing',
        subject: 'c7',
      });
      const found = (now.results as { id: string }[]).map((r) => r.id);
      expect(found).toContain(paris.id);
      expect(found).not.toContain(brief.id);
      const then = await ok(client, 'recall', { query: 'where does the customer live', subject: 'c7', as_of: day(1) });
      expect((then.results as { id: string }[]).map((r) => r.id)).not.toContain(contradiction.structuredContent?.id);

      const corrected = await ok(client, 'correct', { memory_id: paris.id, content: 'Lives in Lyon' });
      const superseded = await call(client, 'recall', {
        query: 'where does the customer live',
        subject: 'c7',
        include_superseded: true,
      });
      expect(text(superseded)).toMatch(new RegExp(`superseded ${day(2)} by ${corrected.id as string}`));
      const future = await call(client, 'recall', { query: 'x', as_of: day(9) });
      expect(future.isError).toBe(true);
    } finally {
      await close();
    }
  });
});
