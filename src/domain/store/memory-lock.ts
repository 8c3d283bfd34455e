import type { Db } from '../../db/connect.js';
import { lockAnchor } from '../subjects/anchors.js';
import { findMemoryRow, type MemoryRow } from '../records/memories.js';
import { lockPartition, type Partition } from './partition.js';
import type { Binding } from '../../vocabulary.js';

/** What places a memory in its partition, and names it. */
type Placed = Pick<MemoryRow, 'id' | 'binding' | 'agent_id' | 'anchor_id' | 'session_id'>;

/** The partition a memory belongs to (canon belongs to none: callers refuse it first). */
export function partitionOfRow(tenantId: string, row: Placed): Partition {
  return {
    tenantId,
    binding: row.binding as Exclude<Binding, 'canon'>,
    agentId: row.agent_id,
    anchorId: row.anchor_id,
    sessionId: row.session_id,
  };
}

/**
 * Holds memory `seen` (as read without a lock) for a change by its id, a correction or a delete, in
 * the lock order of partition.ts: its subject, then its partition, and reads it again. Every writer
 * of a memory holds its partition, so the row returned stays as it is until the transaction ends;
 * undefined when it is gone (deleted, swept, or its subject purged).
 *
 * Without the partition, a delete would lock the memory's row before the partition's statistics
 * (migration 0006's triggers), while a store or correction in the same partition locks them in the
 * other order (it inserts, then supersedes or reinforces): the two deadlock.
 *
 * The partition read before the lock is the one to take: the only move between partitions is a
 * session memory's promotion to its subject's profile, and a session partition's locks include the
 * profile's (lockPartition).
 */
export async function lockMemory(trx: Db, tenantId: string, seen: Placed): Promise<MemoryRow | undefined> {
  if (seen.anchor_id && !(await lockAnchor(trx, tenantId, seen.anchor_id))) return undefined;
  await lockPartition(trx, partitionOfRow(tenantId, seen));
  return findMemoryRow(trx, tenantId, seen.id);
}
