import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import type { Core } from '../../src/domain/core.js';
import type { Embedder } from '../../src/embedding/embedder.js';
import { engine, newKey, newTenant, testApi, testCore, type Tenant, type TestApi } from '../helpers/harness.js';
import { createAnchor, startSession } from '../helpers/store-recall.js';
import { expectProblem, MEMORY_FIELDS, UUID } from '../helpers/problem.js';

type Json = ReturnType<typeof JSON.parse>;
type Message = { role: string; content: string; id?: string; name?: string };

const ingest = (api: TestApi, t: Tenant, body: unknown, agent = 'support-bot') =>
  api.http
    .post(`/v1/agents/${encodeURIComponent(agent)}/conversations/ingest`)
    .set(t.auth)
    .send(body as object);

const chat: Message[] = [
  { role: 'user', content: 'Hi there!' },
  { role: 'assistant', content: 'Hello! How can I help you today?' },
  { role: 'user', content: 'I prefer email over phone calls. I live in Lisbon and I work as a nurse.' },
  { role: 'assistant', content: 'Noted. Anything else?' },
  { role: 'user', content: "I'm allergic to peanuts. Thanks!" },
];
const CHAT_FACTS = [
  'The user prefers email over phone calls.',
  'The user lives in Lisbon.',
  'The user works as a nurse.',
  'The user is allergic to peanuts.',
];
const withIds = (messages: Message[], prefix = 'm') => messages.map((m, i) => ({ ...m, id: `${prefix}${i + 1}` }));

/** Every memory, audit event and ingest record of a tenant, as JSON text, in a stable order. */
type TenantState = Record<'memories' | 'audit_events' | 'ingested_messages' | 'entities' | 'sessions', string[]>;

async function tenantState(api: TestApi, tenantId: string): Promise<TenantState> {
  const rows = async (table: string, order: string) =>
    (
      await sql<{ row: string }>`SELECT row_to_json(t)::text AS row FROM ${sql.table(table)} t
        WHERE tenant_id = ${tenantId} ORDER BY ${sql.raw(order)}`.execute(api.core.db)
    ).rows.map((r) => r.row);
  return {
    memories: await rows('memories', 'id'),
    audit_events: await rows('audit_events', 'seq'),
    ingested_messages: await rows('ingested_messages', 'conversation_id, message_id'),
    entities: await rows('entities', 'id'),
    sessions: await rows('sessions', 'id'),
  };
}

describe(`POST /v1/agents/{id}/conversations/ingest on ${engine}`, () => {
  it('stores the facts of the user turns as private memories, each through the store path', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const res = await ingest(api, t, { messages: chat, metadata: { channel: 'chat' } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['extractor', 'memories', 'skipped_messages']);
    expect(res.body.extractor).toBe('heuristic');
    expect(res.body.skipped_messages).toBe(0);
    expect(res.body.memories.map((m: Json) => m.content)).toEqual(CHAT_FACTS);
    for (const m of res.body.memories) {
      expect(Object.keys(m).sort()).toEqual([...MEMORY_FIELDS, 'outcome'].sort());
      expect(m).toMatchObject({
        id: expect.stringMatching(UUID),
        agent_id: 'support-bot',
        binding: 'private',
        anchor_id: null,
        session_id: null,
        outcome: 'created',
        confidence: 0.7,
      });
      // The caller's metadata, and where the fact came from.
      expect(m.metadata).toMatchObject({ channel: 'chat', ingest: { extractor: 'heuristic' } });
    }
    expect(res.body.memories.map((m: Json) => m.metadata.ingest.kind)).toEqual([
      'preference',
      'fact',
      'fact',
      'constraint',
    ]);
    // Stored like any memory: readable, with a trail that says "created".
    const one = await api.http.get(`/v1/memories/${res.body.memories[0].id}`).set(t.auth);
    expect(one.body.content).toBe(CHAT_FACTS[0]);
    const history = await api.http.get(`/v1/memories/${res.body.memories[0].id}/history`).set(t.auth);
    expect(history.body.events.map((e: Json) => e.action)).toEqual(['created']);
  });

  it('binds as docs/api.md §4 says: anchored by external id or id, session alone, anchor with session as provenance', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const messages = [{ role: 'user', content: 'I live in Porto.' }];

    const byExternal = await ingest(api, t, { messages, anchor_external_id: 'customer-1' });
    expect(byExternal.body.memories[0]).toMatchObject({ binding: 'anchored', anchor_external_id: 'customer-1' });
    const anchorId = byExternal.body.memories[0].anchor_id as string;
    expect(anchorId).toMatch(UUID);

    const byId = await ingest(api, t, {
      messages: [{ role: 'user', content: 'I own a bakery.' }],
      anchor_id: anchorId,
    });
    expect(byId.body.memories[0]).toMatchObject({ binding: 'anchored', anchor_id: anchorId, session_id: null });

    const session = await startSession(api, t.auth, { agent_id: 'support-bot', anchor_id: anchorId });
    const inSession = await ingest(api, t, {
      messages: [{ role: 'user', content: "I'm in a hurry today." }],
      session_id: session,
    });
    expect(inSession.body.memories[0]).toMatchObject({ binding: 'session', session_id: session, anchor_id: anchorId });

    const both = await ingest(api, t, {
      messages: [{ role: 'user', content: 'I have two cats.' }],
      anchor_id: anchorId,
      session_id: session,
    });
    expect(both.body.memories[0]).toMatchObject({ binding: 'anchored', anchor_id: anchorId, session_id: session });

    const loose = await startSession(api, t.auth, { agent_id: 'support-bot' });
    const looseRes = await ingest(api, t, { messages: [{ role: 'user', content: 'I like jazz.' }], session_id: loose });
    expect(looseRes.body.memories[0]).toMatchObject({ binding: 'session', session_id: loose, anchor_id: null });
  });

  it('reinforces instead of duplicating when a conversation is sent again without ids', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const first = await ingest(api, t, { messages: chat, anchor_external_id: 'customer-2' });
    const again = await ingest(api, t, { messages: chat, anchor_external_id: 'customer-2' });
    expect(again.status).toBe(200);
    expect(again.body.skipped_messages).toBe(0);
    expect(again.body.memories.map((m: Json) => [m.id, m.outcome, m.reinforcement_count])).toEqual(
      first.body.memories.map((m: Json) => [m.id, 'reinforced', 1]),
    );
    const profile = await api.http.get(`/v1/anchors/${first.body.memories[0].anchor_id}/memories`).set(t.auth);
    expect(profile.body.memories.map((m: Json) => m.content).sort()).toEqual([...CHAT_FACTS].sort());
  });

  it('stores a fact said twice in one call once', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const res = await ingest(api, t, {
      messages: [
        { role: 'user', content: 'I live in Lisbon.' },
        { role: 'assistant', content: 'Where in Lisbon?' },
        { role: 'user', content: 'I live in Lisbon. Near the river.' },
      ],
    });
    expect(res.body.memories.map((m: Json) => [m.content, m.outcome])).toEqual([
      ['The user lives in Lisbon.', 'created'],
    ]);
  });

  it('with conversation_id and message ids, a re-send changes nothing at all: rows and audit trail', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const session = await startSession(api, t.auth, { agent_id: 'support-bot', anchor_external_id: 'customer-3' });
    const body = { messages: withIds(chat), conversation_id: 'conv-1', session_id: session };
    const first = await ingest(api, t, body);
    expect(first.status).toBe(200);
    expect(first.body.memories).toHaveLength(CHAT_FACTS.length);
    const before = await tenantState(api, t.tenantId);
    expect(before.ingested_messages).toHaveLength(chat.length);

    const again = await ingest(api, t, body);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ extractor: 'heuristic', memories: [], skipped_messages: chat.length });
    expect(await tenantState(api, t.tenantId)).toEqual(before);
  });

  it('skips the messages ingested before and ingests the new ones, counting what it skipped', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const first = await ingest(api, t, { messages: withIds(chat), conversation_id: 'conv-2' });
    expect(first.body.skipped_messages).toBe(0);
    const longer = [
      ...withIds(chat),
      { role: 'assistant', content: 'Anything else?', id: 'm6' },
      { role: 'user', content: 'I have a dog named Rex.', id: 'm7' },
    ];
    const next = await ingest(api, t, { messages: longer, conversation_id: 'conv-2' });
    expect(next.body.skipped_messages).toBe(chat.length);
    expect(next.body.memories.map((m: Json) => [m.content, m.outcome])).toEqual([
      ['The user has a dog named Rex.', 'created'],
    ]);
    // Ids are per conversation: the same ids in another conversation are new messages.
    const other = await ingest(api, t, { messages: withIds(chat), conversation_id: 'conv-3' });
    expect(other.body.skipped_messages).toBe(0);
    expect(other.body.memories.map((m: Json) => m.outcome)).toEqual(CHAT_FACTS.map(() => 'reinforced'));
    // ...and per agent.
    const otherAgent = await ingest(api, t, { messages: withIds(chat), conversation_id: 'conv-2' }, 'other-bot');
    expect(otherAgent.body.skipped_messages).toBe(0);
  });

  it('embeds all the facts of a call in one embedder call', async () => {
    const base = await testCore();
    const calls: number[] = [];
    const counting: Embedder = {
      ...base.embedder,
      embed: (...args: Parameters<Embedder['embed']>) => {
        calls.push(args[0].length);
        return base.embedder.embed(...args);
      },
    };
    const core: Core = { ...base, embedder: counting };
    const app = createApp(core);
    const api: TestApi = { app, core, http: request(app) };
    const t = await newTenant(api);
    calls.length = 0;
    const res = await ingest(api, t, { messages: chat, anchor_external_id: 'customer-4' });
    expect(res.body.memories).toHaveLength(CHAT_FACTS.length);
    expect(calls).toEqual([CHAT_FACTS.length]);
  });

  it('after a failure mid-way, a retry skips what was stored and stores the rest, without duplicates', async () => {
    const base = await testCore();
    let failOn: string | undefined = 'Lisbon';
    // A store that fails (as a lost database connection would) on the fact naming Lisbon.
    const core: Core = {
      ...base,
      contradictions: {
        contradicted: (newer, candidates) => {
          if (failOn && newer.includes(failOn)) return Promise.reject(new Error('connection lost'));
          return base.contradictions.contradicted(newer, candidates);
        },
      },
    };
    const app = createApp(core);
    const api: TestApi = { app, core, http: request(app) };
    const t = await newTenant(api);
    const messages = [
      { role: 'user', content: 'I prefer email over phone calls.', id: 'a' },
      { role: 'user', content: 'I live in Lisbon and I work as a nurse.', id: 'b' },
      { role: 'user', content: "I'm allergic to peanuts.", id: 'c' },
    ];
    const failed = await ingest(api, t, { messages, conversation_id: 'conv-f' });
    expect(failed.status).toBe(500);
    const recorded = await tenantState(api, t.tenantId);
    expect(recorded.ingested_messages.map((r) => JSON.parse(r).message_id)).toEqual(['a']);
    expect(recorded.memories).toHaveLength(1);

    failOn = undefined;
    const retry = await ingest(api, t, { messages, conversation_id: 'conv-f' });
    expect(retry.status).toBe(200);
    expect(retry.body.skipped_messages).toBe(1);
    expect(retry.body.memories.map((m: Json) => [m.content, m.outcome])).toEqual([
      ['The user lives in Lisbon.', 'created'],
      ['The user works as a nurse.', 'created'],
      ['The user is allergic to peanuts.', 'created'],
    ]);
    expect((await tenantState(api, t.tenantId)).memories).toHaveLength(4);
  });

  it('answers 200 with no memories for a conversation without facts', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const res = await ingest(api, t, {
      messages: [
        { role: 'user', content: "What's the capital of Australia?" },
        { role: 'assistant', content: 'Canberra. I live in Lisbon, by the way.' },
        { role: 'user', content: 'Cool, thanks.' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ extractor: 'heuristic', memories: [], skipped_messages: 0 });
  });
});

describe(`ingest refusals on ${engine}`, () => {
  it('answers 409 session_ended for an ended session, before storing anything', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const session = await startSession(api, t.auth, { agent_id: 'support-bot', anchor_external_id: 'customer-5' });
    await api.http.post(`/v1/sessions/${session}/end`).set(t.auth).send({});
    const before = await tenantState(api, t.tenantId);
    expectProblem(
      await ingest(api, t, { messages: withIds(chat), conversation_id: 'c', session_id: session }),
      409,
      'session_ended',
    );
    expectProblem(
      await ingest(api, t, { messages: chat, session_id: session, anchor_external_id: 'new-subject' }),
      409,
      'session_ended',
    );
    expect(await tenantState(api, t.tenantId)).toEqual(before);
  });

  it('answers 404 for an unknown session or anchor_id, and for those of another tenant', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const other = await newTenant(api);
    const theirs = await startSession(api, other.auth, { agent_id: 'a' });
    const theirAnchor = await createAnchor(api, other.auth, 'x');
    expectProblem(await ingest(api, t, { messages: chat, session_id: randomUUID() }), 404, 'not_found');
    expectProblem(await ingest(api, t, { messages: chat, anchor_id: randomUUID() }), 404, 'not_found');
    expectProblem(await ingest(api, t, { messages: chat, session_id: theirs }), 404, 'not_found');
    expectProblem(await ingest(api, t, { messages: chat, anchor_id: theirAnchor }), 404, 'not_found');
    expect((await tenantState(api, t.tenantId)).memories).toEqual([]);
  });

  it('answers 409 conflict when anchor and session name different subjects, storing nothing', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const alice = await createAnchor(api, t.auth, 'alice');
    await createAnchor(api, t.auth, 'bob');
    const aboutAlice = await startSession(api, t.auth, { agent_id: 'a', anchor_id: alice });
    const before = await tenantState(api, t.tenantId);
    for (const body of [
      { anchor_external_id: 'bob', session_id: aboutAlice },
      { anchor_external_id: 'carol', session_id: aboutAlice },
      { anchor_id: alice, anchor_external_id: 'bob' },
    ]) {
      expectProblem(await ingest(api, t, { messages: chat, ...body }), 409, 'conflict');
    }
    expect(await tenantState(api, t.tenantId)).toEqual(before);
  });

  it('answers 400 to empty and malformed bodies', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const path = '/v1/agents/support-bot/conversations/ingest';
    expectProblem(await api.http.post(path).set(t.auth), 400, 'invalid_request');
    expectProblem(await api.http.post(path).set(t.auth).send({}), 400, 'invalid_request');
    expectProblem(
      await api.http.post(path).set(t.auth).set('Content-Type', 'application/json').send('{"messages": ['),
      400,
      'invalid_request',
    );
    for (const body of [
      { messages: [] },
      { messages: 'hello' },
      { messages: [{ role: 'user' }] },
      { messages: [{ role: 'user', content: '   ' }] },
      { messages: [{ role: 'robot', content: 'I live in Lisbon.' }] },
      { messages: [{ role: 'user', content: 'I live in Lisbon.', id: '' }] },
      { messages: [{ role: 'user', content: 'I live in Lisbon.', id: 'x'.repeat(201) }] },
      { messages: [{ role: 'user', content: 'I live in Lisbon.', created_at: 'yesterday' }] },
      { messages: [{ role: 'user', content: 'I live\u0000 in Lisbon.' }] },
      { messages: chat, anchor_id: 'not-a-uuid' },
      { messages: chat, conversation_id: '' },
      {
        messages: [
          { role: 'user', content: 'I live in Lisbon.', id: 'same' },
          { role: 'user', content: 'I work as a nurse.', id: 'same' },
        ],
      },
    ]) {
      const res = await ingest(api, t, body);
      expect({ body, status: res.status, code: res.body.code }).toEqual({ body, status: 400, code: 'invalid_request' });
    }
    const duplicate = await ingest(api, t, {
      messages: [
        { role: 'user', content: 'a b c', id: 'same' },
        { role: 'user', content: 'd e f', id: 'same' },
      ],
    });
    expect(duplicate.body.errors).toEqual([{ path: 'messages.1.id', message: 'repeats the id of messages.0' }]);
    expect((await tenantState(api, t.tenantId)).memories).toEqual([]);
  });

  it('takes 1 to 500 messages', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ role: 'assistant', content: `Turn ${i}` }));
    const over = await ingest(api, t, { messages: many(501) });
    expectProblem(over, 400, 'invalid_request');
    expect(over.body.errors).toEqual([{ path: 'messages', message: 'must hold at most 500 messages' }]);
    const fine = await ingest(api, t, { messages: many(500) });
    expect(fine.status).toBe(200);
    expect(fine.body.memories).toEqual([]);
  });

  it("answers 413 for a message's content over the limit, naming the message", async () => {
    const api = await testApi({ config: { CONTENT_LIMIT_CHARS: '100' } });
    const t = await newTenant(api);
    const res = await ingest(api, t, {
      messages: [
        { role: 'user', content: 'I live in Lisbon.' },
        { role: 'assistant', content: 'é'.repeat(101) },
      ],
    });
    expectProblem(res, 413, 'payload_too_large');
    expect(res.body.errors).toEqual([{ path: 'messages.1.content', message: 'must be at most 100 characters' }]);
    // Characters are code points: 100 emoji fit.
    expect((await ingest(api, t, { messages: [{ role: 'user', content: '🙂'.repeat(100) }] })).status).toBe(200);
  });

  it('needs the write scope, and a valid agent id in the path', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const reader = await newKey(api, t, ['read']);
    const res = await api.http
      .post('/v1/agents/support-bot/conversations/ingest')
      .set(reader.auth)
      .send({ messages: chat });
    expectProblem(res, 403, 'insufficient_scope');
    expectProblem(await ingest(api, t, { messages: chat }, ' '), 400, 'invalid_request');
    expectProblem(await ingest(api, t, { messages: chat }, 'x'.repeat(201)), 400, 'invalid_request');
    const odd = await ingest(api, t, { messages: chat }, 'agent/with spaces');
    expect(odd.status).toBe(200);
    expect(odd.body.memories[0].agent_id).toBe('agent/with spaces');
  });

  it('is in the OpenAPI document, with its body and answer', async () => {
    const api = await testApi();
    const doc = (await api.http.get('/v1/openapi.json')).body;
    const op = doc.paths['/v1/agents/{id}/conversations/ingest'].post;
    expect(op.security).toEqual([{ bearer: [] }]);
    expect(Object.keys(op.responses).sort()).toEqual(
      ['200', '202', '400', '401', '403', '404', '409', '413', '415', '429', '500', '503'].sort(),
    );
  });
});

describe(`ingest and purge on ${engine}`, () => {
  it("purging a subject erases its ingest records with its memories, and leaves others' alone", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const session = await startSession(api, t.auth, { agent_id: 'bot', anchor_external_id: 'to-purge' });
    await ingest(api, t, { messages: withIds(chat), conversation_id: 'conv-p1', anchor_external_id: 'to-purge' });
    await ingest(api, t, { messages: withIds(chat, 's'), conversation_id: 'conv-p2', session_id: session });
    // Facts-less messages still name the subject, created for them as a store would.
    await ingest(api, t, {
      messages: [{ role: 'user', content: 'Thanks!', id: 'q1' }],
      conversation_id: 'conv-p3',
      anchor_external_id: 'no-facts-yet',
    });
    await ingest(api, t, { messages: withIds(chat), conversation_id: 'conv-keep', anchor_external_id: 'keep' });
    const anchors = (await api.http.get('/v1/anchors').set(t.auth)).body.anchors as Json[];
    const idOf = (external: string) => anchors.find((a) => a.anchor_external_id === external)?.id as string;
    expect(idOf('no-facts-yet')).toMatch(UUID);

    const ledgerOf = async () =>
      (await tenantState(api, t.tenantId)).ingested_messages.map((r) => JSON.parse(r).conversation_id as string);
    expect(new Set(await ledgerOf())).toEqual(new Set(['conv-p1', 'conv-p2', 'conv-p3', 'conv-keep']));

    for (const external of ['to-purge', 'no-facts-yet']) {
      const purged = await api.http
        .delete(`/v1/anchors/${idOf(external)}`)
        .set(t.auth)
        .query({ purge: 'true' });
      expect(purged.status).toBe(200);
    }
    expect(new Set(await ledgerOf())).toEqual(new Set(['conv-keep']));
    const traces = Object.values(await tenantState(api, t.tenantId))
      .flat()
      .filter((row) => row.includes('conv-p') || row.includes(idOf('to-purge')) || row.includes(session));
    // The one counts-only anchor_purged event of each purge holds the anchor id, nothing else.
    expect(traces.map((r) => JSON.parse(r).action)).toEqual(['anchor_purged']);
  });
});
