import { sql, type KyselyPlugin } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Actor, Core } from '../../src/domain/core.js';
import { ingestConversation, type IngestInput } from '../../src/domain/ingest.js';
import { storeMemory } from '../../src/domain/store.js';
import { engine, newTenant, testApi, type TestApi } from '../helpers/harness.js';
import { startSession } from '../helpers/store-recall.js';

/**
 * docs/api.md §5: with a conversation id and message ids, an ingest is exactly-once per message
 * whatever fails. The database "dies" at one statement of the ingest (every statement from there on
 * fails, as on a lost connection), then the identical ingest is sent again on a working database:
 * the subject must end as one uninterrupted run leaves it, at every point of failure.
 */

const AGENT = 'support-bot';

/**
 * A conversation that exercises the store path: a contradiction (Porto → Lisbon), a session
 * memory promoted on its third reinforcement (jazz), the profile's copy reinforced from a session
 * (piano), a fact said again two messages later (cats), messages with two facts, and messages
 * with none.
 */
const MESSAGES: IngestInput['messages'] = [
  { role: 'user', content: 'I live in Lisbon and I have two cats.', id: 'm1' },
  { role: 'assistant', content: 'Nice! Anything else?', id: 'm2' },
  { role: 'user', content: 'I have two cats. I like jazz.', id: 'm3' },
  { role: 'user', content: 'I play the piano. I work as a nurse.', id: 'm4' },
  { role: 'assistant', content: 'Noted.', id: 'm5' },
  { role: 'user', content: 'I prefer tea over coffee. I am allergic to peanuts.', id: 'm6' },
  { role: 'user', content: "I drive a Tesla. I'm vegetarian.", id: 'm7' },
  { role: 'assistant', content: 'Thanks!', id: 'm8' },
];

interface Subject {
  actor: Actor;
  input: IngestInput;
}

/** A tenant whose subject already holds what the conversation reinforces, contradicts and promotes. */
async function subject(api: TestApi): Promise<Subject> {
  const t = await newTenant(api);
  const actor: Actor = { tenantId: t.tenantId, keyId: null, scopes: new Set(['read', 'write', 'admin']) };
  const sessionId = await startSession(api, t.auth, { agent_id: AGENT, anchor_external_id: 'customer' });
  const inSession = { agentId: AGENT, anchor: {}, sessionId };
  await storeMemory(api.core, actor, { ...inSession, content: 'The user lives in Porto.' });
  for (let i = 0; i < 3; i++) await storeMemory(api.core, actor, { ...inSession, content: 'The user likes jazz.' });
  await storeMemory(api.core, actor, {
    agentId: AGENT,
    anchor: { anchorExternalId: 'customer' },
    content: 'The user plays the piano.',
  });
  return {
    actor,
    input: { agentId: AGENT, messages: MESSAGES, conversationId: 'conv', anchor: {}, sessionId },
  };
}

/** The subject's memories, ingest records and audit trail, with ids replaced by the content they name. */
async function state(core: Core, tenantId: string): Promise<unknown> {
  const memories = (
    await sql<Record<string, unknown>>`SELECT id, content, binding, status, confidence, reinforcement_count,
        superseded_by, agent_id, anchor_id IS NOT NULL AS anchored, session_id IS NOT NULL AS in_session,
        window_embedding IS NOT NULL AS windowed, metadata
      FROM memories WHERE tenant_id = ${tenantId} ORDER BY content, status`.execute(core.db)
  ).rows;
  const contentOf = new Map(memories.map((m) => [m['id'] as string, m['content'] as string]));
  const named = (text: string) => [...contentOf].reduce((s, [id, content]) => s.replaceAll(id, content), text);
  const marks = (
    await sql<{ message_id: string; named: boolean }>`SELECT message_id,
        anchor_id IS NOT NULL AND session_id IS NOT NULL AS named
      FROM ingested_messages WHERE tenant_id = ${tenantId} ORDER BY message_id`.execute(core.db)
  ).rows;
  const audit = (
    await sql<{ action: string; memory_id: string | null; changes: unknown }>`SELECT action, memory_id, changes
      FROM audit_events WHERE tenant_id = ${tenantId} AND memory_id IS NOT NULL ORDER BY seq`.execute(core.db)
  ).rows;
  return {
    memories: memories.map(({ id: _, ...m }) => JSON.parse(named(JSON.stringify(m)))),
    marks,
    audit: audit.map((e) => named(JSON.stringify(e))),
  };
}

/**
 * The core with a database that counts the statements sent through it and, once `failAt` of them
 * have gone, refuses every later one as a lost connection does.
 */
function dying(core: Core, failAt: number): { core: Core; sent: () => number } {
  let sent = 0;
  const plugin: KyselyPlugin = {
    transformQuery: (args) => {
      if (++sent > failAt) throw new Error('Connection terminated unexpectedly');
      return args.node;
    },
    transformResult: (args) => Promise.resolve(args.result),
  };
  return { core: { ...core, db: core.db.withPlugin(plugin) }, sent: () => sent };
}

describe(`an ingest interrupted at any statement, then sent again, on ${engine}`, () => {
  it('leaves the subject as one uninterrupted run does', async () => {
    const api = await testApi();

    const clean = await subject(api);
    const counted = dying(api.core, Infinity);
    const first = await ingestConversation(counted.core, clean.actor, clean.input);
    expect(first.memories.map((m) => [m.content, m.outcome])).toEqual([
      ['The user lives in Lisbon.', 'created'],
      ['The user has two cats.', 'created'],
      ['The user likes jazz.', 'promoted'],
      ['The user plays the piano.', 'reinforced'],
      ['The user works as a nurse.', 'created'],
      ['The user prefers tea over coffee.', 'created'],
      ['The user is allergic to peanuts.', 'created'],
      ['The user drives a Tesla.', 'created'],
      ['The user is vegetarian.', 'created'],
    ]);
    expect(first.memories[0]?.supersedes).toHaveLength(1);
    const statements = counted.sent();
    const expected = await state(api.core, clean.actor.tenantId);
    // Every memory the ingest created in the session has its window vector, also those whose
    // previous memory was not the fact before them (that one reinforced a memory instead).
    const created = (expected as { memories: { metadata: { ingest?: unknown }; windowed: boolean }[] }).memories;
    expect(created.filter((m) => m.metadata.ingest !== undefined).map((m) => m.windowed)).toEqual(
      Array.from({ length: 7 }, () => true),
    );

    // Points spread over the whole ingest, from its first read to its last write.
    const points = [...new Set(Array.from({ length: 8 }, (_, i) => Math.floor((i * statements) / 8)))];
    const marksLeft = new Set<number>();
    for (const failAt of points) {
      const s = await subject(api);
      await expect(ingestConversation(dying(api.core, failAt).core, s.actor, s.input)).rejects.toThrow(
        'Connection terminated',
      );
      marksLeft.add(((await state(api.core, s.actor.tenantId)) as { marks: unknown[] }).marks.length);
      await ingestConversation(api.core, s.actor, s.input);
      expect({ failAt, state: await state(api.core, s.actor.tenantId) }).toEqual({ failAt, state: expected });
      // Sent once more, it changes nothing.
      const again = await ingestConversation(api.core, s.actor, s.input);
      expect({ failAt, again: [again.memories, again.skippedMessages] }).toEqual({
        failAt,
        again: [[], MESSAGES.length],
      });
    }
    // Some failures came after part of the conversation was ingested: those retries resumed.
    expect([...marksLeft].some((n) => n > 0 && n < MESSAGES.length)).toBe(true);
  });

  it('ingests each message once when the identical call arrives twice at once', async () => {
    const api = await testApi();
    const clean = await subject(api);
    await ingestConversation(api.core, clean.actor, clean.input);
    const expected = await state(api.core, clean.actor.tenantId);

    const s = await subject(api);
    const both = await Promise.all([1, 2].map(() => ingestConversation(api.core, s.actor, s.input)));
    expect(await state(api.core, s.actor.tenantId)).toEqual(expected);
    // Between them, every fact once and every message once.
    expect(both.flatMap((r) => r.memories).length).toBe(9);
    expect(both.map((r) => r.skippedMessages).reduce((a, b) => a + b)).toBe(MESSAGES.length);
  });
});
