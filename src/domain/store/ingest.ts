import { identityText } from '../../beliefs/near-duplicate.js';
import type { Db } from '../../db/connect.js';
import type { ConversationMessage, ExtractedFact } from '../../extraction/extractor.js';
import { actAs } from '../tenancy/agent-binding.js';
import { assertContentLimit } from './content-limit.js';
import type { AnchorRef } from '../subjects/anchors.js';
import type { Actor, Core } from '../core.js';
import { placeForStore, resolvePlacement, type Placement } from './placement.js';
import { judgeBatch, judgeContradictions, prejudgedFor, type BatchVerdicts } from './contradictions.js';
import { speakerOfMemory } from './neighbours.js';
import { storedMemory, storeFact, type StoredMemory } from './store.js';
import { lastInSession, windowText } from './windows.js';

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
  /**
   * Messages left out because this conversation's message of that id was ingested before (or, by an
   * identical call at the same time, meanwhile).
   */
  skippedMessages: number;
}

/** How far an ingest is: its messages, those done (ingested or skipped), the memories stored so far. */
export interface IngestProgress {
  messages: number;
  messagesDone: number;
  memories: number;
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
 * Records the messages with ids as ingested, in the transaction that stores their facts, and
 * answers which of them it recorded: the others a concurrent ingest of the same conversation
 * recorded first (the insert waits for its commit), and their facts are its to store. Rows go in
 * one order (by id) so that two such inserts never wait on each other in a cycle; they come after
 * the subject's and the session's locks and before the partition's (partition.ts).
 */
async function claim(
  trx: Db,
  actor: Actor,
  input: IngestInput,
  messages: readonly IngestMessage[],
  now: Date,
): Promise<Set<string>> {
  const conversationId = input.conversationId;
  const ids = messages.flatMap((m) => (m.id === undefined ? [] : [m.id])).sort();
  if (conversationId === undefined || ids.length === 0) return new Set();
  // Placed as a store is: the subject an external id names for the first time is created here, so
  // that the row names it for a purge to find, and the subject and session are held until the commit.
  const placement = await placeForStore(trx, actor.tenantId, now, input.anchor, input.sessionId);
  const rows = await trx
    .insertInto('ingested_messages')
    .values(
      ids.map((messageId) => ({
        tenant_id: actor.tenantId,
        agent_id: input.agentId,
        conversation_id: conversationId,
        message_id: messageId,
        anchor_id: placement.anchorId,
        session_id: input.sessionId ?? null,
        ingested_at: now,
      })),
    )
    .onConflict((oc) => oc.columns(['tenant_id', 'agent_id', 'conversation_id', 'message_id']).doNothing())
    .returning('message_id')
    .execute();
  return new Set(rows.map((r) => r.message_id));
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

/** Messages `from` to `to`, both included: what one transaction ingests. */
interface Part {
  readonly from: number;
  readonly to: number;
}

/**
 * The call's messages cut into consecutive parts, each as short as it can be while a fact said in
 * it is said again only within it. Each part commits alone, so a retry after a failure resumes at
 * the first part not committed; and since a fact said again is never split from where it was first
 * said (distinct), the retry stores exactly what the uninterrupted call would have stored from there.
 * A message without facts joins the part after it.
 */
function partsOf(count: number, said: readonly ExtractedFact[]): Part[] {
  // The last message saying each fact (said is in message order), then how far each message reaches.
  const lastSaid = new Map(said.map((f) => [identityText(f.content), f.message]));
  const reach = new Array<number>(count).fill(-1);
  for (const f of said) {
    reach[f.message] = Math.max(reach[f.message] ?? -1, lastSaid.get(identityText(f.content)) ?? f.message);
  }
  const parts: Part[] = [];
  let from = 0;
  let end = -1;
  for (let i = 0; i < count; i++) {
    const own = reach[i] ?? -1;
    end = Math.max(end, own);
    if ((own >= 0 && end === i) || i === count - 1) {
      parts.push({ from, to: i });
      from = i + 1;
    }
  }
  return parts;
}

/** Thrown to roll a part back when one of its facts needs a window vector nobody embedded. */
class WindowsUnforeseen extends Error {
  constructor(readonly texts: readonly string[]) {
    super('window vectors to embed');
  }
}

/**
 * POST /v1/agents/{id}/conversations/ingest (docs/api.md §5): extracts the facts of the messages not
 * ingested before (one extractor call, batched inside), embeds them in one call, judges their
 * contradictions in one model call when a model judges, and stores each through the store path of
 * POST /v1/memories, with the same binding (reinforcement, supersession, promotion included).
 *
 * Exactly once per message: the facts of a part of the call (partsOf), their audit events and the
 * ingested marks of its messages commit in one transaction, so a failure anywhere leaves each
 * message either wholly ingested and marked, or not at all, and the identical retry skips the first
 * and ingests the rest. Nothing slow runs in those transactions: vectors and a model's verdicts
 * come before, and each holds the subject's locks for one part's facts, not for the whole call.
 */
export async function ingestConversation(
  core: Core,
  actor: Actor,
  input: IngestInput,
  onProgress?: (progress: IngestProgress) => void | Promise<void>,
): Promise<IngestResult> {
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
  let skippedMessages = input.messages.length - pending.length;
  const report = (messagesDone: number, memories: number) =>
    onProgress?.({ messages: input.messages.length, messagesDone, memories });
  await report(skippedMessages, 0);
  if (pending.length === 0) return { extractor: core.extractor.id, memories: [], skippedMessages };

  const extraction = await core.extractor.extract(
    pending.map((m) => ({ role: m.role, content: m.content, name: m.name, createdAt: m.createdAt })),
  );
  const said = extraction.facts.map((f) => ({ ...f, content: f.content.trim() }));
  const facts = distinct(said);
  // Into a session, each memory also gets a window vector after the one stored before it
  // (windows.ts), embedded with the facts, foreseeing that each fact is stored as a new memory.
  const before =
    input.sessionId === undefined ? undefined : await lastInSession(core.db, actor.tenantId, input.sessionId);
  const foreseen =
    input.sessionId === undefined
      ? []
      : facts.flatMap((f, i) => {
          const previous = i === 0 ? before?.content : facts[i - 1]?.content;
          return previous === undefined ? [] : [windowText(previous, f.content)];
        });
  const vectors = facts.length > 0 ? await core.embedder.embed([...facts.map((f) => f.content), ...foreseen]) : [];
  if (vectors.length !== facts.length + foreseen.length)
    throw new Error('embedder returned a different number of vectors');
  const windows = new Map(foreseen.map((text, i) => [text, vectors[facts.length + i] ?? new Float32Array()]));

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
  const ingest = {
    core,
    actor,
    input,
    target,
    pending,
    facts,
    vectors,
    windows,
    batch,
    extractor: extraction.extractor,
  };
  const ids: (string | undefined)[] = [];
  const memories: StoredMemory[] = [];
  for (const part of partsOf(pending.length, said)) {
    const result = await ingestPart(ingest, part, ids);
    memories.push(...result.memories);
    skippedMessages += result.skipped;
    await report(input.messages.length - pending.length + part.to + 1, memories.length);
  }
  return { extractor: extraction.extractor, memories, skippedMessages };
}

interface Ingest {
  core: Core;
  actor: Actor;
  input: IngestInput;
  target: Placement;
  pending: readonly IngestMessage[];
  facts: readonly ExtractedFact[];
  vectors: readonly Float32Array[];
  windows: Map<string, Float32Array>;
  batch: BatchVerdicts | undefined;
  extractor: string;
}

/**
 * Stores the facts of one part and marks its messages ingested, in one transaction. `ids` holds the
 * memory of each fact stored before (by index into the facts), for the verdicts judged in a batch.
 */
async function ingestPart(
  ingest: Ingest,
  part: Part,
  ids: (string | undefined)[],
): Promise<{ memories: StoredMemory[]; skipped: number }> {
  const { core, actor, input, target, pending, facts, vectors, windows, batch } = ingest;
  const messages = pending.slice(part.from, part.to + 1);
  const own = facts.flatMap((fact, i) => (fact.message >= part.from && fact.message <= part.to ? [{ fact, i }] : []));
  const marking = input.conversationId !== undefined && messages.some((m) => m.id !== undefined);
  if (own.length === 0 && !marking) return { memories: [], skipped: 0 };
  const where = { agentId: input.agentId, anchor: input.anchor, sessionId: input.sessionId };
  // Resolved once up front, unless the first store is still to create the anchor named.
  const placed = target.binding === 'anchored' && target.anchorId === null ? undefined : target;
  // A model that cannot judge a batch judges each fact here, before the part's locks are taken.
  const verdicts =
    batch || core.contradictions.local
      ? undefined
      : await Promise.all(
          own.map(({ fact, i }) =>
            judgeContradictions(
              core,
              actor,
              { ...where, content: fact.content, placed },
              fact.content,
              vectors[i] ?? new Float32Array(),
              speakerOfMemory(input.metadata, fact.content),
            ),
          ),
        );
  // Once more at most, with the windows the first attempt did not foresee; after that, a window
  // still unforeseen (another caller stored into the session meanwhile) is left out, as a store does.
  for (let attempt = 0; ; attempt++) {
    const unforeseen: string[] = [];
    try {
      return await core.db.transaction().execute(async (trx) => {
        const claimed = await claim(trx, actor, input, messages, core.clock());
        const mine = (m: IngestMessage | undefined) => !marking || m?.id === undefined || claimed.has(m.id);
        const stored: StoredMemory[] = [];
        const partIds = [...ids];
        for (const [k, { fact, i }] of own.entries()) {
          const source = pending[fact.message];
          if (!mine(source)) continue;
          const result = await storeFact(core, actor, {
            ...where,
            content: fact.content,
            metadata: {
              ...input.metadata,
              ingest: {
                kind: fact.kind,
                extractor: ingest.extractor,
                ...(input.conversationId !== undefined ? { conversation_id: input.conversationId } : {}),
                ...(source?.id !== undefined ? { message_id: source.id } : {}),
              },
            },
            // When it was said: the message's time, when the caller gave one.
            occurredAt: source?.createdAt === undefined ? undefined : new Date(source.createdAt),
            embedding: vectors[i],
            placed,
            prejudged: batch ? prejudgedFor(batch, i, partIds) : verdicts?.[k],
            within: trx,
            windowAfter: (previous) => {
              const text = windowText(previous.content, fact.content);
              const vector = windows.get(text);
              if (!vector) unforeseen.push(text);
              return vector;
            },
          });
          partIds[i] = result.memory.id;
          stored.push(storedMemory(result));
        }
        if (unforeseen.length > 0 && attempt === 0) throw new WindowsUnforeseen(unforeseen);
        ids.splice(0, ids.length, ...partIds);
        return { memories: stored, skipped: messages.filter((m) => !mine(m)).length };
      });
    } catch (error) {
      if (!(error instanceof WindowsUnforeseen)) throw error;
      const vectorsOf = await core.embedder.embed(error.texts);
      error.texts.forEach((text, j) => {
        const vector = vectorsOf[j];
        if (vector) windows.set(text, vector);
      });
    }
  }
}
