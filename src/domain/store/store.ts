import type { z } from 'zod';
import type { Config } from '../../config.js';
import type { StoredMemoryObject } from '../../schemas/objects.js';
import type { Db } from '../../db/connect.js';
import { identityText, sameValues } from '../../beliefs/near-duplicate.js';
import type { ContradictionDetector } from '../../beliefs/contradiction-detector.js';
import { actAs } from '../tenancy/agent-binding.js';
import { assertContentLimit } from './content-limit.js';
import { anchorExternalId, type AnchorRef } from '../subjects/anchors.js';
import { recordEvent } from '../records/audit.js';
import { askedExpiry, reinforcedExpiry, type LifeInput } from '../lifecycle/life.js';
import type { Actor, Core } from '../core.js';
import { findMemoryRow, insertMemory, toMemory, type Memory } from '../records/memories.js';
import { anchoredOf, lockPartition, type Partition } from './partition.js';
import { recordMention } from '../subjects/session-memories.js';
import { placeForStore, type Placement, type StorePlacement } from './placement.js';
import { markSuperseded } from './supersede.js';
import { createdEvent, createdMemory, type Creation } from './creation.js';
import { newId } from '../text.js';
import { lastInSession, windowText } from './windows.js';
import { deterministic, judgeContradictions, verdicts, withLateArrivals } from './contradictions.js';
import { nearest, partitionOf, speakerOfMemory, type Candidate, type Near } from './neighbours.js';
import type { Binding } from '../../vocabulary.js';

export interface StoreInput {
  agentId: string;
  content: string;
  anchor: AnchorRef;
  sessionId?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
  /** When what it says happened or was said (a message's time); when it is stored by default. */
  occurredAt?: Date | undefined;
  /** Its end of life and pin (./life.ts); a store into a memory it reinforces applies them there. */
  life?: LifeInput | undefined;
  /** The vector of `content` (trimmed), when the caller embedded a batch at once; else embedded here. */
  embedding?: Float32Array | undefined;
  /**
   * Verdicts judged before the store, in one model call for a whole ingest (judgeBatch): memory id →
   * contradicted. The store then asks no model; a candidate without a verdict is judged under the
   * lock by the deterministic detector.
   */
  prejudged?: ReadonlyMap<string, boolean> | undefined;
  /** Where an ingest checked the facts go, so that judging before each store need not resolve it again. */
  placed?: Placement | undefined;
  /**
   * An ingest's transaction, to store in it (with the other facts of its messages and their ingested
   * marks) instead of in one of the store's own. Nothing may then use core.db (PGlite's one
   * connection is the transaction's) nor wait on a model or embedder under the locks: the caller
   * gives `embedding`, `prejudged` unless the detector is local, and `windowAfter` for a session.
   */
  within?: Db | undefined;
  /**
   * With `within`: the window vector of `content` after the session's last memory, as the caller
   * embedded it beforehand; undefined when it did not foresee that memory (the memory then has none).
   */
  windowAfter?: ((previous: { id: string; content: string }) => Float32Array | undefined) | undefined;
  /**
   * With `within`: the placement of `anchor` and `sessionId` as that transaction placed it, holding
   * the subject's and the session's locks and the partition's, so that the store takes none again
   * (a batch takes them once for every store of a subject: batch.ts).
   */
  held?: StorePlacement | undefined;
}

export type StoreOutcome = 'created' | 'reinforced' | 'promoted';

export interface StoreResult {
  memory: Memory;
  outcome: StoreOutcome;
  supersedes: string[];
  /** Pinned memories it contradicts: never superseded silently, they stay active. */
  contradicts?: string[];
}

/** The answer to a store: the memory, its outcome, and what it superseded (src/schemas/objects.ts). */
export type StoredMemory = z.output<typeof StoredMemoryObject>;

export function storedMemory(result: StoreResult): StoredMemory {
  return {
    ...result.memory,
    outcome: result.outcome,
    ...(result.supersedes.length > 0 ? { supersedes: result.supersedes } : {}),
    ...(result.contradicts && result.contradicts.length > 0 ? { contradicts: result.contradicts } : {}),
  };
}

/** Each reinforcement closes this share of the gap between a memory's confidence and 1. */
const REINFORCEMENT_GAIN = 0.15;
/** docs/api.md §6: a session memory reinforced this often for its anchor becomes durable. */
const PROMOTE_AT = 3;

/**
 * The store path of docs/api.md §6: in one transaction, serialized per partition, find a duplicate and
 * reinforce it (promoting a session memory on its third reinforcement), or insert and supersede
 * what the new memory contradicts. Canon never comes here.
 */
export async function storeMemory(core: Core, actor: Actor, input: StoreInput): Promise<StoreResult> {
  assertContentLimit(input.content, core.config.contentLimitChars);
  return storeFact(core, actor, input);
}

/**
 * storeMemory without the content limit, for an ingest's facts: the limit applies to what a caller
 * writes (the messages, checked before extraction), not to what a model reads out of them.
 */
export async function storeFact(core: Core, actor: Actor, input: StoreInput): Promise<StoreResult> {
  actAs(actor, input.agentId);
  const content = input.content.trim();
  const speaker = speakerOfMemory(input.metadata, content);
  // Embedding and a model's judgement are slow and need no lock: both happen before the transaction
  // opens. So does the window vector's (windows.ts), from the memory stored last in the session
  // now, which the transaction checks under the partition's lock before it keeps the vector.
  const within = input.within;
  const previous =
    input.sessionId === undefined || within ? undefined : await lastInSession(core.db, actor.tenantId, input.sessionId);
  const texts = [...(input.embedding ? [] : [content]), ...(previous ? [windowText(previous.content, content)] : [])];
  const vectors = texts.length > 0 ? await core.embedder.embed(texts) : [];
  const embedding = input.embedding ?? vectors[0];
  if (!embedding || vectors.length !== texts.length) throw new Error('embedder returned no vector');
  const window = previous ? vectors[vectors.length - 1] : undefined;
  const prejudged =
    input.prejudged ??
    (core.contradictions.local || within
      ? undefined
      : await judgeContradictions(core, actor, input, content, embedding, speaker));

  // The transaction sees plain values, never core: core.db inside it would deadlock PGlite's one
  // connection and escape the transaction on Postgres.
  const { clock, config } = core;
  const dims = core.embedder.dimensions;
  const threshold = core.embedder.nearDuplicateThreshold;
  const embedderId = core.embedder.id;
  // A model never judges under the lock: its verdicts came before (prejudged), the rest is deterministic.
  const underLock = core.contradictions.local ? core.contradictions : deterministic;
  const body = async (trx: Db): Promise<StoreResult> => {
    const now = clock();
    const expiresAt = askedExpiry(input.life ?? {}, now);
    const held = within ? input.held : undefined;
    const { anchorExternalId: placedExternalId, ...placement } =
      held ?? (await placeForStore(trx, actor.tenantId, now, input.anchor, input.sessionId));
    const partition = partitionOf(actor, input.agentId, placement);
    if (!partition) throw new Error('placement with create found no anchor');
    if (!held) await lockPartition(trx, partition);
    const candidates = await nearest(trx, partition, dims, embedding, now, speaker);
    // The deterministic detector judges here, on exactly the memories the lock protects, and
    // whatever arrived after a model judged.
    const judged = prejudged
      ? await withLateArrivals(prejudged, content, candidates)
      : await verdicts(underLock, content, candidates);
    const duplicate = await findDuplicate(content, candidates, judged, threshold, underLock);
    const twin = await profileTwin(trx, partition, dims, content, embedding, now, speaker);
    // The subject's external id, for the answer: placing the store found it, unless it named the
    // subject by anchor_id.
    const externalIdOf = async (anchorId: string | null): Promise<string | null> => {
      if (anchorId === null) return null;
      const placed = anchorId === partition.anchorId ? placedExternalId : undefined;
      return placed ?? (await anchorExternalId(trx, actor.tenantId, anchorId));
    };
    const life = { expiresAt, pinned: input.life?.pinned };
    const reinforcing = { trx, actor, partition, decayPerDay: config.decayPerDay, now, externalIdOf, life };
    // A pinned session copy is kept as it is rather than merged away into its profile twin.
    if (twin) return reinforce(reinforcing, twin, duplicate?.pinned ? undefined : duplicate);
    if (duplicate) return reinforce(reinforcing, duplicate);

    const id = newId();
    // Another memory may have joined the session since the window was embedded: the window is kept
    // only if the memory it was built from is still the last one.
    const last =
      (window || input.windowAfter) && partition.sessionId
        ? await lastInSession(trx, actor.tenantId, partition.sessionId)
        : undefined;
    const windowEmbedding =
      last && input.windowAfter ? input.windowAfter(last) : last && last.id === previous?.id ? window : undefined;
    // Only what was judged and is still active here is superseded; a pinned memory never silently:
    // the answer names it in `contradicts` and it stays active.
    const contradicted = candidates.filter((c) => judged.get(c.id) === true);
    const supersedes = contradicted.filter((c) => !c.pinned).map((c) => c.id);
    const contradicts = contradicted.filter((c) => c.pinned).map((c) => c.id);
    const creation: Creation = {
      id,
      input,
      partition,
      content,
      embedding,
      windowEmbedding,
      confidence: config.initialConfidence,
      now,
      expiresAt,
    };
    const inserted = await insertMemory(trx, createdMemory(creation), {
      decayPerDay: config.decayPerDay,
      embedderId,
    });
    await recordEvent(trx, actor, now, createdEvent(creation, supersedes, contradicts));
    for (const oldId of supersedes) await supersede(trx, actor, partition, oldId, id, now);
    const row = { ...inserted, anchor_external_id: await externalIdOf(inserted.anchor_id) };
    return { memory: toMemory(row, now), outcome: 'created' as const, supersedes, contradicts };
  };
  return within ? body(within) : core.db.transaction().execute(body);
}

/** The same text up to case and punctuation, or near-identical with the same values and no objection. */
export async function findDuplicate<C extends Near>(
  content: string,
  candidates: readonly C[],
  judged: Map<string, boolean>,
  threshold: number,
  detector: ContradictionDetector,
): Promise<C | undefined> {
  const identity = identityText(content);
  const exact = candidates.find((c) => identityText(c.content) === identity);
  if (exact) return exact;
  for (const c of candidates) {
    if (1 - c.distance < threshold || !sameValues(content, c.content)) continue;
    // A memory that arrived after judging gets its verdict now, so nothing skips the check.
    const contradicted = judged.get(c.id) ?? (await detector.contradicted(content, [c.content]))[0]?.contradicts;
    if (!contradicted) return c;
  }
  return undefined;
}

/**
 * The durable profile holds one copy of each fact: a store into a subject's session finds the same
 * text (up to case and punctuation) there first, and reinforces that copy instead of starting or
 * reinforcing one of its own. Only the same text counts: a near-identical one may be another
 * speaker's, and the session partition keeps those apart itself.
 */
async function profileTwin(
  trx: Db,
  partition: Partition,
  dimensions: number,
  content: string,
  embedding: Float32Array,
  now: Date,
  speaker: string | null,
): Promise<Candidate | undefined> {
  if (partition.binding !== 'session' || !partition.anchorId) return undefined;
  const identity = identityText(content);
  const profile = await nearest(trx, anchoredOf(partition), dimensions, embedding, now, speaker);
  return profile.find((c) => identityText(c.content) === identity);
}

/** What a reinforcement needs of its store, besides the memories. */
interface Reinforcing {
  trx: Db;
  actor: Actor;
  partition: Partition;
  decayPerDay: Config['decayPerDay'];
  now: Date;
  externalIdOf: (anchorId: string | null) => Promise<string | null>;
  /** What the store asked of the memory's life: applied to the memory it reinforces. */
  life: { expiresAt: Date | null | undefined; pinned: boolean | undefined };
}

/**
 * Reinforces memory `row` for this store. With `merged`, a session copy of the same fact merges
 * into it: every store that copy counted (its creation and its reinforcements) reinforces `row` as
 * well, and the copy is marked superseded by it, so it leaves recall and the store path and goes
 * with its session. Both rows were read under the partition's lock (nearest), so they are current.
 */
async function reinforce(r: Reinforcing, row: Candidate, merged?: Candidate): Promise<StoreResult> {
  const { trx, actor, partition, now } = r;
  const id = row.id;
  const steps = 1 + (merged ? merged.reinforcement_count + 1 : 0);
  let confidence = row.confidence;
  for (let i = 0; i < steps; i++) confidence += REINFORCEMENT_GAIN * (1 - confidence);
  const count = row.reinforcement_count + steps;
  // Only a session memory without a twin in the profile comes here to be promoted (profileTwin).
  const promote = row.binding === 'session' && row.anchor_id !== null && count >= PROMOTE_AT;
  const binding: Binding = promote ? 'anchored' : row.binding;
  const changed = {
    confidence,
    reinforcement_count: count,
    last_reinforced_at: now,
    updated_at: now,
    binding,
    decay_rate: r.decayPerDay[binding],
    // A store never unpins nor shortens a memory's life (./life.ts).
    pinned: row.pinned || r.life.pinned === true,
    expires_at: reinforcedExpiry(row.expires_at, r.life.expiresAt),
  };
  const updated = await trx
    .updateTable('memories')
    .set(changed)
    .where('tenant_id', '=', actor.tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  // Every delete of a memory holds its partition (a purge, its subject) as this store does: the row is still here.
  if (Number(updated.numUpdatedRows) === 0) throw new Error('duplicate vanished under the partition lock');
  // The memory stays with the session it was formed in; a later session that stores it again keeps
  // it from being swept with that one for as long as the later session lives.
  if (binding === 'session' && partition.sessionId && row.session_id && partition.sessionId !== row.session_id) {
    await recordMention(trx, actor.tenantId, id, partition.sessionId);
  }
  const event = { agentId: partition.agentId, memoryId: id, anchorId: row.anchor_id, sessionId: partition.sessionId };
  await recordEvent(trx, actor, now, {
    ...event,
    action: 'reinforced',
    changes: {
      confidence_before: row.confidence,
      confidence,
      reinforcement_count: count,
      binding: row.binding,
      ...(merged ? { merged_from: merged.id } : {}),
      ...(changed.pinned !== row.pinned ? { pinned: true } : {}),
      ...(changed.expires_at?.getTime() !== row.expires_at?.getTime()
        ? { expires_at: changed.expires_at?.toISOString() ?? null }
        : {}),
    },
  });
  if (promote) {
    await recordEvent(trx, actor, now, {
      ...event,
      action: 'promoted',
      changes: { binding_before: 'session', binding: 'anchored', reinforcement_count: count },
    });
  }
  if (merged) await markMerged(trx, actor, partition, merged, id, now);
  // The row as read with what the update set: reading it again would cost a round trip and find the same.
  const { distance: _, ...own } = row;
  const memory = toMemory({ ...own, ...changed, anchor_external_id: await r.externalIdOf(row.anchor_id) }, now);
  return { memory, outcome: promote ? 'promoted' : 'reinforced', supersedes: [] };
}

async function markMerged(
  trx: Db,
  actor: Actor,
  partition: Partition,
  copy: Candidate,
  intoId: string,
  now: Date,
): Promise<void> {
  await markSuperseded(trx, actor.tenantId, copy.id, intoId, now);
  await recordEvent(trx, actor, now, {
    action: 'merged',
    agentId: partition.agentId,
    memoryId: copy.id,
    anchorId: copy.anchor_id,
    sessionId: copy.session_id,
    changes: { merged_into: intoId, binding: copy.binding, reinforcement_count: copy.reinforcement_count },
  });
}

async function supersede(
  trx: Db,
  actor: Actor,
  partition: Partition,
  oldId: string,
  newId: string,
  now: Date,
): Promise<void> {
  const old = await findMemoryRow(trx, actor.tenantId, oldId);
  if (!old) return;
  await markSuperseded(trx, actor.tenantId, oldId, newId, now);
  await recordEvent(trx, actor, now, {
    action: 'superseded',
    agentId: partition.agentId,
    memoryId: oldId,
    anchorId: old.anchor_id,
    sessionId: old.session_id,
    changes: { superseded_by: newId, binding: old.binding, confidence: old.confidence },
  });
}
