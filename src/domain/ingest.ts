import { identityText } from '../beliefs/near-duplicate.js';
import { isForeignKeyViolation } from '../errors.js';
import type { ConversationMessage, ExtractedFact } from '../extraction/extractor.js';
import { actAs } from './agent-binding.js';
import { assertContentLimit } from './content-limit.js';
import { resolveAnchor, type AnchorRef } from './anchors.js';
import type { Actor, Core } from './core.js';
import { resolvePlacement, type Placement } from './placement.js';
import { judgeBatch, prejudgedFor, speakerOfMemory, storedMemory, storeFact, type StoredMemory } from './store.js';

export interface IngestMessage extends ConversationMessage {
  /** The caller's id of the message: with a conversation id, a message is ingested once. */
  readonly id?: string | undefined;
}

export interface IngestInput {
  agentId: string;
  messages: readonly IngestMessage[];
  conversationId?: string | undefined;
  anchor: AnchorRef;
  sessionId?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export interface IngestResult {
  /** What produced the facts: "anthropic:<model>", or "heuristic" (also after a fallback). */
  extractor: string;
  /** One per fact stored, in the order stored; a fact said twice in one call is stored once. */
  memories: StoredMemory[];
  /** Messages left out because this conversation's message of that id was ingested before. */
  skippedMessages: number;
}

/**
 * The refusals of the store path (docs/api.md §2, §4), up front, so that a refused ingest stores
 * nothing: an unknown session or anchor_id is 404, an ended session 409 session_ended, an anchor
 * and a session of different subjects (or two names of different anchors) 409 conflict. The
 * placement's anchor is null while an external id names none yet (the first store creates it).
 */
async function checkTarget(core: Core, actor: Actor, input: IngestInput): Promise<Placement> {
  const { placement } = await resolvePlacement(core.db, actor.tenantId, input.anchor, input.sessionId, {
    mustBeActive: true,
  });
  return placement;
}

async function alreadyIngested(
  core: Core,
  actor: Actor,
  input: IngestInput,
  conversationId: string,
): Promise<Set<string>> {
  const ids = input.messages.flatMap((m) => (m.id === undefined ? [] : [m.id]));
  if (ids.length === 0) return new Set();
  const rows = await core.db
    .selectFrom('ingested_messages')
    .select('message_id')
    .where('tenant_id', '=', actor.tenantId)
    .where('agent_id', '=', input.agentId)
    .where('conversation_id', '=', conversationId)
    .where('message_id', 'in', ids)
    .execute();
  return new Set(rows.map((r) => r.message_id));
}

/**
 * Records messages as ingested. Called only once their facts are stored, so a failure in between
 * loses nothing: the re-sent message is extracted again, and its facts reinforce what was stored
 * instead of duplicating it.
 */
async function markIngested(
  core: Core,
  actor: Actor,
  input: IngestInput,
  target: Placement,
  messages: readonly IngestMessage[],
): Promise<void> {
  const conversationId = input.conversationId;
  const ids = messages.flatMap((m) => (m.id === undefined ? [] : [m.id]));
  if (conversationId === undefined || ids.length === 0) return;
  // The row must name its subject for a purge to find it: an anchor that no fact has created yet
  // is created here, as a store naming it would.
  const anchorId =
    target.binding === 'anchored' && target.anchorId === null
      ? ((await resolveAnchor(core.db, actor.tenantId, input.anchor, { createAt: core.clock() })) ?? null)
      : target.anchorId;
  const now = core.clock();
  try {
    await core.db
      .insertInto('ingested_messages')
      .values(
        ids.map((messageId) => ({
          tenant_id: actor.tenantId,
          agent_id: input.agentId,
          conversation_id: conversationId,
          message_id: messageId,
          anchor_id: anchorId,
          session_id: input.sessionId ?? null,
          ingested_at: now,
        })),
      )
      // A concurrent re-send recorded them first.
      .onConflict((oc) => oc.columns(['tenant_id', 'agent_id', 'conversation_id', 'message_id']).doNothing())
      .execute();
  } catch (error) {
    // The subject or session was purged meanwhile, and its memories with it: nothing to record.
    if (isForeignKeyViolation(error)) return;
    throw error;
  }
}

/** Each fact once, in message order; a fact said again later counts as said where first said. */
function distinct(facts: readonly ExtractedFact[]): ExtractedFact[] {
  const seen = new Set<string>();
  return facts.filter((f) => {
    const key = identityText(f.content);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * POST /v1/agents/{id}/conversations/ingest (docs/api.md §5): extracts the facts of the messages not
 * ingested before (one extractor call, batched inside), embeds them in one call, judges their
 * contradictions in one model call when a model judges, and stores each through the store path of
 * POST /v1/memories, with the same binding (reinforcement, supersession, promotion included).
 */
export async function ingestConversation(core: Core, actor: Actor, input: IngestInput): Promise<IngestResult> {
  input.messages.forEach((m, i) =>
    assertContentLimit(m.content, core.config.contentLimitChars, `messages.${i}.content`),
  );
  // Before anything is extracted: each store checks too, but a refused ingest must cost nothing.
  actAs(actor, input.agentId);
  const target = await checkTarget(core, actor, input);
  const conversationId = input.conversationId;
  const done =
    conversationId === undefined ? new Set<string>() : await alreadyIngested(core, actor, input, conversationId);
  const pending = input.messages.filter((m) => m.id === undefined || !done.has(m.id));
  const skippedMessages = input.messages.length - pending.length;
  if (pending.length === 0) return { extractor: core.extractor.id, memories: [], skippedMessages };

  const extraction = await core.extractor.extract(
    pending.map((m) => ({ role: m.role, content: m.content, name: m.name, createdAt: m.createdAt })),
  );
  const facts = distinct(extraction.facts).map((f) => ({ ...f, content: f.content.trim() }));
  const vectors = facts.length > 0 ? await core.embedder.embed(facts.map((f) => f.content)) : [];
  if (vectors.length !== facts.length) throw new Error('embedder returned a different number of vectors');

  const where = { agentId: input.agentId, anchor: input.anchor, sessionId: input.sessionId };
  // One model call judges every fact, not one call per fact.
  const batch = await judgeBatch(
    core,
    actor,
    input.agentId,
    target,
    facts.map((f, i) => ({
      content: f.content,
      embedding: vectors[i] ?? new Float32Array(),
      speaker: speakerOfMemory(input.metadata, f.content),
    })),
  );
  const memories: StoredMemory[] = [];
  let stored = 0;
  try {
    for (const [i, fact] of facts.entries()) {
      const source = pending[fact.message];
      const result = await storeFact(core, actor, {
        ...where,
        content: fact.content,
        metadata: {
          ...input.metadata,
          ingest: {
            kind: fact.kind,
            extractor: extraction.extractor,
            ...(conversationId !== undefined ? { conversation_id: conversationId } : {}),
            ...(source?.id !== undefined ? { message_id: source.id } : {}),
          },
        },
        embedding: vectors[i],
        // Resolved once up front, unless the first store is still to create the anchor named.
        placed: target.binding === 'anchored' && target.anchorId === null ? undefined : target,
        prejudged:
          batch &&
          prejudgedFor(
            batch,
            i,
            memories.map((m) => m.id),
          ),
      });
      memories.push(storedMemory(result));
      stored++;
    }
  } catch (error) {
    // Messages before the one whose fact failed are complete: a retry skips them.
    const complete = pending.slice(0, facts[stored]?.message ?? pending.length);
    await markIngested(core, actor, input, target, complete).catch((markError: unknown) =>
      core.log.warn(
        { event: 'ingest_mark_failed', err_type: markError instanceof Error ? markError.name : typeof markError },
        'could not record ingested messages after a failed ingest; a retry reinforces their facts',
      ),
    );
    throw error;
  }
  await markIngested(core, actor, input, target, pending);
  return { extractor: extraction.extractor, memories, skippedMessages };
}
