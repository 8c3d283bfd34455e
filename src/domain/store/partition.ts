import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import { sessionMemoryGone } from '../subjects/session-memories.js';
import type { Binding } from '../../vocabulary.js';

/**
 * The unit within which memories reinforce, contradict and supersede each other (docs/api.md §6): one
 * agent's private memories; one anchor's anchored memories; one anchor's session memories across
 * its sessions (one session's, for a session without anchor). Nothing in one partition ever changes
 * a memory of another.
 */
export interface Partition {
  tenantId: string;
  binding: Exclude<Binding, 'canon'>;
  agentId: string;
  anchorId: string | null;
  sessionId: string | null;
}

export function partitionKey(p: Partition): string {
  switch (p.binding) {
    case 'private':
      return `${p.tenantId}/private/${p.agentId}`;
    case 'anchored':
      return `${p.tenantId}/anchored/${p.anchorId ?? ''}`;
    case 'session':
      return p.anchorId ? `${p.tenantId}/session-of/${p.anchorId}` : `${p.tenantId}/session/${p.sessionId ?? ''}`;
  }
}

/**
 * Serializes stores into one partition across connections and processes until the transaction
 * ends, so two stores of the same fact reinforce once each instead of inserting twice. Only a
 * session store's look at its subject's profile crosses partitions (store.ts). Whatever else changes
 * or deletes a partition's memories holds it too (a correction, a delete, the sweeper: memory-lock.ts),
 * so that none finds a memory it read gone, and none locks a memory's row before the partition's
 * statistics (migration 0006) while another locks them the other way round.
 *
 * The lock order. Every transaction that writes what belongs to a subject takes its locks in this
 * order, skipping those it does not need, so that two of them never wait on each other in a cycle:
 *   1. the subject's entity row: FOR KEY SHARE by writers (stores, session start and end, memory
 *      deletes, the sweeper; lockAnchor in anchors.ts), FOR UPDATE by a purge, which therefore waits
 *      for the writers in flight and makes later ones wait for it, then find the subject gone;
 *   2. the session row: FOR SHARE by a store into it, FOR UPDATE by its end (a purge deletes it);
 *   3. the partition advisory locks, anchored before session when a writer takes both;
 *   4. memory rows, by updating or deleting them.
 * A session's subject is read unlocked before step 1, which is safe because it never changes.
 */
export async function lockPartition(trx: Db, p: Partition): Promise<void> {
  // A subject's session memories defer to its durable profile (store.ts: one copy of each fact), so
  // whoever changes them holds the profile's partition too, taken first.
  if (p.binding === 'session' && p.anchorId) await lockKey(trx, partitionKey(anchoredOf(p)));
  await lockKey(trx, partitionKey(p));
}

async function lockKey(trx: Db, key: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
}

/** The durable profile of a session partition's subject. */
export function anchoredOf(p: Partition): Partition {
  return { ...p, binding: 'anchored', sessionId: null };
}

type MemoryEb = ExpressionBuilder<Database & { m: Database['memories'] }, 'm'>;

/**
 * The partition's active memories, as SQL on memories `m`; expired memories and session memories of
 * expired sessions are gone.
 */
export function inPartition(eb: MemoryEb, p: Partition, now: Date): Expression<SqlBool> {
  const common = [
    eb('m.tenant_id', '=', p.tenantId),
    eb('m.status', '=', 'active'),
    eb('m.binding', '=', p.binding),
    // An expired memory is gone for the store path too, before the sweeper deletes it.
    eb.or([eb('m.expires_at', 'is', null), eb('m.expires_at', '>', now), eb('m.pinned', '=', true)]),
  ];
  switch (p.binding) {
    case 'private':
      return eb.and([...common, eb('m.agent_id', '=', p.agentId)]);
    case 'anchored':
      return eb.and([...common, eb('m.anchor_id', '=', p.anchorId)]);
    case 'session':
      return eb.and([
        ...common,
        p.anchorId ? eb('m.anchor_id', '=', p.anchorId) : eb('m.session_id', '=', p.sessionId),
        eb.not(sessionMemoryGone(now)),
      ]);
  }
}
