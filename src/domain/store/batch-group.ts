import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import { cosineDistanceTo, toVectorLiteral } from '../../db/vector.js';
import { identityText } from '../../beliefs/near-duplicate.js';
import { sameSpeaker } from '../../text/speakers.js';
import { anchorExternalId } from '../subjects/anchors.js';
import { recordEvents, type AuditInput } from '../records/audit.js';
import type { Actor, Core } from '../core.js';
import { askedExpiry } from '../lifecycle/life.js';
import { insertMemories, toMemory, type NewMemory } from '../records/memories.js';
import { anchoredOf, inPartition, partitionKey, type Partition } from './partition.js';
import type { StorePlacement } from './placement.js';
import { verdicts } from './contradictions.js';
import { createdEvent, createdMemory, type Creation } from './creation.js';
import { CANDIDATES, partitionOf, SPEAKER_READ_FACTOR, speakerOfMemory, type Near } from './neighbours.js';
import { findDuplicate, type StoreResult } from './store.js';
import { newId } from '../text.js';
import type { BatchItem } from './batch.js';
import { lastInSession, windowText } from './windows.js';
import { inTransactionYieldMs, yieldToRecalls } from '../recall-gate.js';

/**
 * The stores of one lock domain of a batch (batch.ts), set-based where that provably changes
 * nothing: the same memories, audit events, webhooks and outcomes as storeFact called for each item
 * in order, in fewer statements.
 *
 * The partitions' nearest memories are read for all the items at once, one statement per partition
 * (a LATERAL walk per item's vector), before anything is written; the group holds the partitions'
 * locks, so only its own stores change them after that read. Then, in order, each item is judged in
 * memory against exactly what storeFact would read at its turn: the read memories plus those the
 * group created before it in the partition, nearest first. An item that is created and supersedes,
 * contradicts, reinforces or merges nothing (the common case of a history of new facts) is only
 * queued: the queued ones are inserted in one statement, their audit rows in one and their webhook
 * deliveries in one. Any other item is flushed behind the queue and stored by storeFact (`ordered`),
 * which reads the database as it then is; the partitions it may have changed are read again, for
 * the items after it, before the next is judged.
 *
 * Only for a local contradiction detector (one that judges without I/O): a model's verdicts are
 * judged before the lock, item by item, and those groups keep storeFact for each item.
 */

/** An item of the group, placed and embedded. */
export interface GroupItem {
  readonly index: number;
  readonly item: BatchItem;
  /** The content as stored (trimmed). */
  readonly content: string;
  readonly embedding: Float32Array;
  /** Its placement as the group's transaction holds it (holdGroup in batch.ts). */
  readonly held: StorePlacement;
}

export interface GroupStores {
  /** storeFact in the group's transaction, for an item that may interact with others. */
  ordered(item: GroupItem): Promise<StoreResult>;
  /** The window vector of this text, embedded beforehand; undefined (and noted) when it was not foreseen. */
  windowVector(text: string): Float32Array | undefined;
}

/** The most a store reads of its partition (nearest in store.ts reads this many when it weighs a speaker). */
const READ = CANDIDATES * SPEAKER_READ_FACTOR;

interface Judged {
  readonly g: GroupItem;
  readonly partition: Partition;
  /** The partitions the store reads: its own, and its subject's profile for a session store (profileTwin). */
  readonly reads: readonly string[];
  readonly speaker: string | null;
}

/** A memory the group created, not yet in the last read of its partition. */
interface Created {
  readonly step: number;
  readonly partition: string;
  readonly near: Omit<Near, 'distance'>;
  readonly embedding: Float32Array;
}

export async function storeGroupSetBased(
  core: Core,
  actor: Actor,
  trx: Db,
  group: readonly GroupItem[],
  stores: GroupStores,
): Promise<Map<number, StoreResult>> {
  const { config, clock } = core;
  const dims = core.embedder.dimensions;
  const threshold = core.embedder.nearDuplicateThreshold;
  const detector = core.contradictions;
  const setup = { decayPerDay: config.decayPerDay, embedderId: core.embedder.id };
  const readAt = clock();

  const items: Judged[] = group.map((g) => {
    const { anchorExternalId: _, ...placement } = g.held;
    const partition = partitionOf(actor, g.item.agentId, placement);
    if (!partition) throw new Error('placement with create found no anchor');
    const reads = [partitionKey(partition)];
    if (partition.binding === 'session' && partition.anchorId) reads.push(partitionKey(anchoredOf(partition)));
    return { g, partition, reads, speaker: speakerOfMemory(g.item.metadata, g.content) };
  });
  const partitions = new Map<string, Partition>();
  for (const j of items) {
    partitions.set(partitionKey(j.partition), j.partition);
    if (j.reads.length > 1) partitions.set(partitionKey(anchoredOf(j.partition)), anchoredOf(j.partition));
  }

  let step = 0;
  /** Partition → the step of its last read, and each item's nearest memories as read then. */
  const read = new Map<string, { step: number; rows: Map<number, Near[]> }>();
  /** Partition → the step of the last store of storeFact that may have changed it. */
  const changedAt = new Map<string, number>();
  const created: Created[] = [];
  const readPartition = async (key: string, from: number) => {
    const partition = partitions.get(key);
    if (!partition) throw new Error('a partition of the group was not placed');
    const wanted = items.slice(from).filter((j) => j.reads.includes(key));
    await yieldToRecalls(inTransactionYieldMs(core.config));
    read.set(key, { step, rows: await nearestOfMany(trx, partition, dims, wanted, readAt) });
  };
  for (const key of partitions.keys()) await readPartition(key, 0);

  /** What storeFact's nearest would answer for item `j` in partition `key` at this step. */
  const nearestNow = (j: Judged, key: string): Near[] => {
    const last = read.get(key);
    const rows: Near[] = [...(last?.rows.get(j.g.index) ?? [])];
    for (const c of created) {
      if (c.partition !== key || c.step <= (last?.step ?? -1)) continue;
      rows.push({ ...c.near, distance: cosineDistance(j.g.embedding, c.embedding) });
    }
    // Stable: the database's order among equals is kept.
    rows.sort((a, b) => a.distance - b.distance);
    if (j.speaker === null) return rows.slice(0, CANDIDATES);
    return rows
      .slice(0, READ)
      .filter((c) => sameSpeaker(j.speaker, speakerOfMemory(c.metadata, c.content)))
      .slice(0, CANDIDATES);
  };

  /** Created, superseding and contradicting nothing, with no duplicate and no twin in the profile. */
  const standsAlone = async (j: Judged): Promise<boolean> => {
    const [own, profile] = j.reads;
    const candidates = nearestNow(j, own ?? '');
    const judged = await verdicts(detector, j.g.content, candidates);
    if ([...judged.values()].some(Boolean)) return false;
    if (await findDuplicate(j.g.content, candidates, judged, threshold, detector)) return false;
    if (profile === undefined) return true;
    const identity = identityText(j.g.content);
    return !nearestNow(j, profile).some((c) => identityText(c.content) === identity);
  };

  const results = new Map<number, StoreResult>();
  const lastOf = new Map<string, { id: string; content: string } | null>();
  const externalIds = new Map<string, string | null>();
  const externalIdOf = async (j: Judged): Promise<string | null> => {
    const anchorId = j.partition.anchorId;
    if (anchorId === null) return null;
    // As storeFact answers: the external id placing found, else the subject's, read once.
    if (j.g.held.anchorExternalId) return j.g.held.anchorExternalId;
    if (!externalIds.has(anchorId)) externalIds.set(anchorId, await anchorExternalId(trx, actor.tenantId, anchorId));
    return externalIds.get(anchorId) ?? null;
  };

  let queued: { j: Judged; memory: NewMemory; event: AuditInput }[] = [];
  const flush = async () => {
    const batch = queued;
    queued = [];
    if (batch.length === 0) return;
    await yieldToRecalls(inTransactionYieldMs(core.config));
    const rows = await insertMemories(
      trx,
      batch.map((q) => q.memory),
      setup,
    );
    await recordEvents(
      trx,
      actor,
      batch.map((q) => ({ at: q.memory.now, input: q.event })),
    );
    for (const [i, q] of batch.entries()) {
      const row = rows[i];
      if (!row) throw new Error('a queued memory was not inserted');
      const memory = toMemory({ ...row, anchor_external_id: await externalIdOf(q.j) }, q.memory.now);
      results.set(q.j.g.index, { memory, outcome: 'created', supersedes: [], contradicts: [] });
    }
  };

  for (const [position, j] of items.entries()) {
    for (const key of j.reads) {
      const last = read.get(key);
      if ((changedAt.get(key) ?? -1) > (last?.step ?? 0)) {
        await flush();
        await readPartition(key, position);
      }
    }
    const sessionId = j.partition.sessionId;
    // Between items too, not only statements: judging a group's items in memory is event-loop work
    // that recall's answers would otherwise queue behind (recall-gate.ts).
    await yieldToRecalls(inTransactionYieldMs(core.config));
    if (!(await standsAlone(j))) {
      // No second wait here: the item has just waited above, and flush waits before its insert.
      await flush();
      results.set(j.g.index, await stores.ordered(j.g));
      step++;
      for (const key of j.reads) changedAt.set(key, step);
      if (sessionId) lastOf.delete(sessionId);
      continue;
    }
    const now = clock();
    const expiresAt = askedExpiry(j.g.item.life ?? {}, now);
    let windowEmbedding: Float32Array | undefined;
    if (sessionId) {
      if (!lastOf.has(sessionId)) lastOf.set(sessionId, (await lastInSession(trx, actor.tenantId, sessionId)) ?? null);
      const previous = lastOf.get(sessionId);
      if (previous) windowEmbedding = stores.windowVector(windowText(previous.content, j.g.content));
    }
    const id = newId();
    const pinned = j.g.item.life?.pinned;
    const creation: Creation = {
      id,
      input: j.g.item,
      partition: j.partition,
      content: j.g.content,
      embedding: j.g.embedding,
      windowEmbedding,
      confidence: config.initialConfidence,
      now,
      expiresAt,
    };
    // As storeFact records a creation that supersedes and contradicts nothing.
    queued.push({ j, memory: createdMemory(creation), event: createdEvent(creation, [], []) });
    step++;
    created.push({
      step,
      partition: j.reads[0] ?? '',
      near: { id, content: j.g.content, pinned: pinned ?? false, metadata: j.g.item.metadata ?? {} },
      embedding: j.g.embedding,
    });
    if (sessionId) lastOf.set(sessionId, { id, content: j.g.content });
  }
  await flush();
  return results;
}

/**
 * storeFact's read of the partition's nearest memories (nearest in neighbours.ts, before its
 * speaker filter), for many vectors in one statement: item index → its nearest, nearest first.
 * Each item reads as many as nearest would (CANDIDATES, or READ when it weighs a speaker), and only
 * what judging reads of them (Near): the rows of a batch of 500 were most of its client-side work.
 */
async function nearestOfMany(
  trx: Db,
  partition: Partition,
  dimensions: number,
  items: readonly Judged[],
  now: Date,
): Promise<Map<number, Near[]>> {
  const found = new Map<number, Near[]>(items.map((j) => [j.g.index, []]));
  if (items.length === 0) return found;
  const distance = cosineDistanceTo(dimensions, sql<string>`q.v`);
  const nearest = trx
    .selectFrom('memories as m')
    .select(['m.id', 'm.content', 'm.pinned', 'm.metadata', distance.as('distance')])
    .where((eb) => inPartition(eb, partition, now))
    .orderBy(distance)
    .limit(sql<number>`q.n`);
  const { rows } = await sql<Near & { k: number }>`
    SELECT q.k, c.* FROM unnest(${items.map((j) => j.g.index)}::int[],
      ${items.map((j) => toVectorLiteral(j.g.embedding))}::text[]::vector[],
      ${items.map((j) => (j.speaker === null ? CANDIDATES : READ))}::int[]) AS q(k, v, n)
    CROSS JOIN LATERAL ${nearest} AS c`.execute(trx);
  for (const { k, ...row } of rows) found.get(k)?.push(row);
  return found;
}

/** Cosine distance as pgvector's <=> computes it. */
function cosineDistance(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return 1 - dot / Math.sqrt(na * nb);
}
