import type { Db } from '../../db/connect.js';
import { AppError, outageError } from '../../errors.js';
import { actAs } from '../tenancy/agent-binding.js';
import type { AnchorRef } from '../subjects/anchors.js';
import { assertContentLimit } from './content-limit.js';
import type { Actor, Core } from '../core.js';
import { lockPartition, partitionKey, type Partition } from './partition.js';
import { storeGroupSetBased } from './batch-group.js';
import { placeForStore, resolvePlacement, type Placement, type StorePlacement } from './placement.js';
import { judgeContradictions } from './contradictions.js';
import { partitionOf, speakerOfMemory } from './neighbours.js';
import { storeFact, type StoreInput, type StoreResult } from './store.js';
import { lastInSession, windowText } from './windows.js';
import { inTransactionYieldMs, yieldToRecalls } from '../recall-gate.js';
import { withParsedStatementsKept } from '../../beliefs/contradiction.js';

/**
 * Texts embedded in one embedder call. Every wave is embedded before anything is stored: the stores
 * of a domain are set-based (batch-group.ts), so the database's share is small beside the model's,
 * and grouping each domain over the whole batch is worth more than overlapping the two.
 */
const WAVE = 100;

/**
 * Domains stored at once, each in a transaction of its own: they share no lock (domainOf), as the
 * stores of callers working on different subjects share none.
 */
const MAX_GROUPS_AT_ONCE = 4;

/** One item of a batch: the body of POST /v1/memories. */
export type BatchItem = Pick<
  StoreInput,
  'agentId' | 'content' | 'anchor' | 'sessionId' | 'metadata' | 'occurredAt' | 'life'
>;

export type BatchItemResult = { ok: true; result: StoreResult } | { ok: false; error: AppError };

/** An item that passed its checks and was placed, before it is stored. */
interface Prepared {
  readonly index: number;
  readonly item: BatchItem;
  /** The content as stored (trimmed): what is embedded. */
  readonly content: string;
  /** Its lock domain: the stores that may read or change each other's memories (domainOf). */
  readonly domain: string;
  /** The window text foreseen for it (windows.ts), when it goes into a session. */
  readonly window: string | undefined;
}

/**
 * The stores that can touch each other's memories share a domain: one subject's (its profile and
 * its sessions' memories; a session store looks for its twin in the profile), one session's without
 * a subject, one agent's private memories. Stores of different domains never see each other's
 * memories, so only the order within a domain matters.
 */
function domainOf(item: BatchItem, placement: Placement): string {
  if (placement.anchorId !== null) return `anchor:${placement.anchorId}`;
  if (placement.binding === 'anchored') return `new-anchor:${item.anchor.anchorExternalId ?? ''}`;
  if (placement.binding === 'session') return `session:${placement.sessionId ?? ''}`;
  return `private:${item.agentId}`;
}

const targetKey = (anchor: AnchorRef, sessionId: string | undefined): string =>
  JSON.stringify([anchor.anchorId ?? null, anchor.anchorExternalId ?? null, sessionId ?? null]);

/** An item's failure as the client sees it: its own refusal, an outage, or an internal error (logged). */
function itemError(core: Core, error: unknown): AppError {
  if (error instanceof AppError) return error;
  const outage = outageError(error);
  if (outage) return outage;
  core.log.error({ err: error }, 'batch store: unhandled error');
  return new AppError('internal', 'an internal error occurred; it has been logged');
}

/** Thrown to roll a group back when one of its stores needs a window vector nobody embedded. */
class WindowsUnforeseen extends Error {
  constructor(readonly texts: readonly string[]) {
    super('window vectors to embed');
  }
}

/**
 * POST /v1/memories/batch (docs/api.md §4): stores each item through the store path of POST
 * /v1/memories, with the same memories, audit events and outcomes as the items stored one by one
 * in their order, and answers one result per item in that order. An item's own refusal (its
 * content over the limit, an agent its key may not act as, an unknown or ended session) fails that
 * item only.
 *
 * What makes it faster than one store per call: the texts are embedded many per embedder call
 * (WAVE); the items of one lock domain (domainOf) are stored in one transaction that takes the
 * subject's, sessions' and partitions' locks once, in their order, with the embedding done before
 * it opens; and in it, the items that do not interact are written set-based (batch-group.ts).
 * Within a domain the items are stored in order, so a fact given twice is stored once and
 * reinforced once.
 *
 * For the async import runner as for the route: it takes the items of one caller and answers their
 * results; only an error that is no item's (the embedder unavailable) rejects the whole call.
 */
export async function storeBatch(core: Core, actor: Actor, items: readonly BatchItem[]): Promise<BatchItemResult[]> {
  return withParsedStatementsKept(() => storeItems(core, actor, items));
}

async function storeItems(core: Core, actor: Actor, items: readonly BatchItem[]): Promise<BatchItemResult[]> {
  const results = new Array<BatchItemResult | undefined>(items.length);
  const fail = (index: number, error: unknown) => {
    results[index] = { ok: false, error: itemError(core, error) };
  };
  const prepared = await prepare(core, actor, items, fail);
  const vectors = new Map<string, Float32Array>();
  for (let i = 0; i < prepared.length; i += WAVE) {
    const wave = prepared.slice(i, i + WAVE);
    await embedInto(core, vectors, [
      ...wave.map((p) => p.content),
      ...wave.flatMap((p) => (p.window ? [p.window] : [])),
    ]);
  }
  // A domain's items in one group over the whole batch: the set-based store (batch-group.ts) then
  // writes each of them in a few statements, whatever its size.
  const groups = new Map<string, Prepared[]>();
  for (const p of prepared) groups.set(p.domain, [...(groups.get(p.domain) ?? []), p]);
  await eachAtOnce([...groups.values()], concurrency(core), async (group) => {
    const stored = await storeGroup(core, actor, group, vectors, fail);
    for (const [k, result] of stored) results[k] = { ok: true, result };
  });
  return results.map((r) => r ?? { ok: false, error: new AppError('internal', 'the item was not stored') });
}

/**
 * Groups stored at once: on Postgres, a few connections of the pool (the rest stay for other
 * callers), since a store waits mostly on the database; embedded PGlite has one connection.
 */
function concurrency(core: Core): number {
  if (core.config.databaseUrl === undefined) return 1;
  return Math.max(1, Math.min(MAX_GROUPS_AT_ONCE, Math.floor(core.config.dbPoolSize / 2)));
}

/** Runs `work` on every item, at most `limit` at a time. */
async function eachAtOnce<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++];
      if (item !== undefined) await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Checks, places and foresees the window of every item; an item that fails here is refused alone. */
async function prepare(
  core: Core,
  actor: Actor,
  items: readonly BatchItem[],
  fail: (index: number, error: unknown) => void,
): Promise<Prepared[]> {
  // Each target (subject and session) is resolved once, however many items name it.
  const placements = new Map<string, Promise<Placement>>();
  const lastOf = new Map<string, Promise<string | undefined>>();
  const prepared: Prepared[] = [];
  for (const [index, item] of items.entries()) {
    try {
      assertContentLimit(item.content, core.config.contentLimitChars);
      actAs(actor, item.agentId);
      const key = targetKey(item.anchor, item.sessionId);
      let placing = placements.get(key);
      if (!placing) {
        placing = resolvePlacement(core.db, actor.tenantId, item.anchor, item.sessionId, { mustBeActive: true }).then(
          (r) => r.placement,
        );
        placements.set(key, placing);
      }
      const placement = await placing;
      const content = item.content.trim();
      const sessionId = item.sessionId;
      let window: string | undefined;
      if (sessionId !== undefined) {
        // The memory before it in its session: the batch's item before it there, else the last stored.
        let previous = lastOf.get(sessionId);
        if (!previous) {
          previous = lastInSession(core.db, actor.tenantId, sessionId).then((m) => m?.content);
        }
        const before = await previous;
        window = before === undefined ? undefined : windowText(before, content);
        lastOf.set(sessionId, Promise.resolve(content));
      }
      prepared.push({ index, item, content, domain: domainOf(item, placement), window });
    } catch (error) {
      fail(index, error);
    }
  }
  return prepared;
}

/** Embeds the texts not embedded yet, each once, in one call. */
async function embedInto(core: Core, vectors: Map<string, Float32Array>, texts: readonly string[]): Promise<void> {
  const missing = [...new Set(texts)].filter((t) => !vectors.has(t));
  if (missing.length === 0) return;
  const embedded = await core.embedder.embed(missing);
  if (embedded.length !== missing.length) throw new Error('embedder returned a different number of vectors');
  missing.forEach((text, i) => {
    const vector = embedded[i];
    if (vector) vectors.set(text, vector);
  });
}

/**
 * Stores the items of one domain, in order, in one transaction, set-based where they do not
 * interact (batch-group.ts); answers item index → result. When
 * the transaction fails for one item's refusal, every item is stored again alone, so that only the
 * refused one fails; when the database is away, every item fails with that.
 */
async function storeGroup(
  core: Core,
  actor: Actor,
  group: readonly Prepared[],
  vectors: Map<string, Float32Array>,
  fail: (index: number, error: unknown) => void,
): Promise<Map<number, StoreResult>> {
  const vectorOf = (text: string): Float32Array => {
    const vector = vectors.get(text);
    if (!vector) throw new Error('a batch item was not embedded');
    return vector;
  };
  // A model judges before the locks, each item against the memories stored before the batch; the
  // items stored before it in the group are judged under the lock by the deterministic detector.
  const prejudged = core.contradictions.local
    ? undefined
    : await Promise.all(
        group.map(async (p) => {
          const { placement } = await resolvePlacement(core.db, actor.tenantId, p.item.anchor, p.item.sessionId, {
            mustBeActive: false,
          });
          return judgeContradictions(
            core,
            actor,
            { ...p.item, placed: placement },
            p.content,
            vectorOf(p.content),
            speakerOfMemory(p.item.metadata, p.content),
          );
        }),
      );
  for (let attempt = 0; ; attempt++) {
    const unforeseen: string[] = [];
    // Each group, and each statement of it (batch-group.ts), gives way to recalls in flight.
    await yieldToRecalls(core.config.bulkYieldMs);
    try {
      return await core.db.transaction().execute(async (trx) => {
        const held = await holdGroup(trx, actor, group, core.clock());
        const placed = (p: Prepared): StorePlacement => {
          const placement = held.get(targetKey(p.item.anchor, p.item.sessionId));
          if (!placement) throw new Error('a batch item was not placed');
          return placement;
        };
        const windowVector = (text: string) => {
          const vector = vectors.get(text);
          if (!vector) unforeseen.push(text);
          return vector;
        };
        const ordered = (p: Pick<Prepared, 'item' | 'content'>, k: number, placement: StorePlacement) =>
          storeFact(core, actor, {
            ...p.item,
            embedding: vectorOf(p.content),
            prejudged: prejudged?.[k],
            within: trx,
            held: placement,
            windowAfter: (previous) => windowVector(windowText(previous.content, p.content)),
          });
        let stored = new Map<number, StoreResult>();
        if (core.contradictions.local) {
          // Set-based where the items provably do not interact (batch-group.ts); a local detector
          // judged nothing beforehand (prejudged is undefined).
          stored = await storeGroupSetBased(
            core,
            actor,
            trx,
            group.map((p) => ({ ...p, embedding: vectorOf(p.content), held: placed(p) })),
            { ordered: (g) => ordered(g, -1, g.held), windowVector },
          );
        } else {
          for (const [k, p] of group.entries()) {
            await yieldToRecalls(inTransactionYieldMs(core.config));
            stored.set(p.index, await ordered(p, k, placed(p)));
          }
        }
        // Once more at most, with the windows not foreseen (a fact given twice is stored once, so
        // the one after it follows another memory); after that, as a store does, it has none.
        if (unforeseen.length > 0 && attempt === 0) throw new WindowsUnforeseen(unforeseen);
        return stored;
      });
    } catch (error) {
      if (error instanceof WindowsUnforeseen) {
        await embedInto(core, vectors, error.texts);
        continue;
      }
      if (outageError(error) || group.length === 1) {
        for (const p of group) fail(p.index, error);
        return new Map();
      }
      return storeAlone(core, actor, group, vectorOf, fail);
    }
  }
}

/** The group's items each in a transaction of its own, as POST /v1/memories stores them. */
async function storeAlone(
  core: Core,
  actor: Actor,
  group: readonly Prepared[],
  vectorOf: (text: string) => Float32Array,
  fail: (index: number, error: unknown) => void,
): Promise<Map<number, StoreResult>> {
  const stored = new Map<number, StoreResult>();
  for (const p of group) {
    try {
      await yieldToRecalls(core.config.bulkYieldMs);
      stored.set(p.index, await storeFact(core, actor, { ...p.item, embedding: vectorOf(p.content) }));
    } catch (error) {
      fail(p.index, error);
    }
  }
  return stored;
}

/**
 * Takes the locks of every store of the group in the order of partition.ts, once: each target's
 * subject and session (placing it, which creates a subject named for the first time), then the
 * partitions, profiles before sessions. Answers each target's placement, for its stores to use.
 */
async function holdGroup(
  trx: Db,
  actor: Actor,
  group: readonly Prepared[],
  now: Date,
): Promise<Map<string, StorePlacement>> {
  const held = new Map<string, StorePlacement>();
  const partitions = new Map<string, Partition>();
  for (const p of group) {
    const key = targetKey(p.item.anchor, p.item.sessionId);
    let placement = held.get(key);
    if (!placement) {
      placement = await placeForStore(trx, actor.tenantId, now, p.item.anchor, p.item.sessionId);
      held.set(key, placement);
    }
    const partition = partitionOf(actor, p.item.agentId, placement);
    if (!partition) throw new Error('placement with create found no anchor');
    partitions.set(partitionKey(partition), partition);
  }
  const order = { anchored: 0, session: 1, private: 2 };
  const sorted = [...partitions.values()].sort((a, b) => order[a.binding] - order[b.binding]);
  for (const partition of sorted) await lockPartition(trx, partition);
  return held;
}
