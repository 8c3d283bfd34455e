import { sql } from 'kysely';
import type { Actor, Core } from '../../src/domain/core.js';
import type { IngestInput } from '../../src/domain/store/ingest.js';
import { storeMemory } from '../../src/domain/store/store.js';
import { newTenant, type Tenant, type TestApi } from './harness.js';
import { startSession } from './store-recall.js';

/**
 * What the exactly-once tests of ingest share (docs/api.md §5): a subject whose memories a
 * conversation reinforces, contradicts and promotes, and the state an ingest leaves it in.
 */

export const AGENT = 'support-bot';

/**
 * A conversation that exercises the store path: a contradiction (Porto → Lisbon), a session
 * memory promoted on its third reinforcement (jazz), the profile's copy reinforced from a session
 * (piano), a fact said again two messages later (cats), messages with two facts, and messages
 * with none.
 */
export const MESSAGES: IngestInput['messages'] = [
  { role: 'user', content: 'I live in Lisbon and I have two cats.', id: 'm1' },
  { role: 'assistant', content: 'Nice! Anything else?', id: 'm2' },
  { role: 'user', content: 'I have two cats. I like jazz.', id: 'm3' },
  { role: 'user', content: 'I play the piano. I work as a nurse.', id: 'm4' },
  { role: 'assistant', content: 'Noted.', id: 'm5' },
  { role: 'user', content: 'I prefer tea over coffee. I am allergic to peanuts.', id: 'm6' },
  { role: 'user', content: "I drive a Tesla. I'm vegetarian.", id: 'm7' },
  { role: 'assistant', content: 'Thanks!', id: 'm8' },
];

export interface Subject {
  tenant: Tenant;
  actor: Actor;
  input: IngestInput;
}

/** A tenant whose subject already holds what the conversation reinforces, contradicts and promotes. */
export async function subject(api: TestApi, messages: IngestInput['messages']): Promise<Subject> {
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
    tenant: t,
    actor,
    input: { agentId: AGENT, messages, conversationId: 'conv', anchor: {}, sessionId },
  };
}

/** The subject's memories, ingest records and audit trail, with ids replaced by the content they name. */
export async function state(core: Core, tenantId: string): Promise<unknown> {
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
