import { memoryFilterSql } from '../../db/memory-filter.js';
import type { MemoryFilter } from '../../filter/language.js';
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../db/connect.js';
import type { Core } from '../core.js';
import {
  changedSince,
  MEMORY_WITH_ANCHOR_COLUMNS,
  memoriesWithAnchor,
  toMemory,
  unexpired,
  type Memory,
} from '../records/memories.js';
import { getSession, type Session } from './sessions.js';

/**
 * Notes that a later session of the subject stored the session memory again. The memory keeps the
 * session it was formed in (provenance) instead of moving to the later one, and this note keeps it
 * alive for as long as the later session mentions it (sessionMemoryGone).
 */
export async function recordMention(trx: Db, tenantId: string, memoryId: string, sessionId: string): Promise<void> {
  await trx
    .insertInto('memory_mentions')
    .values({ tenant_id: tenantId, memory_id: memoryId, session_id: sessionId })
    .onConflict((oc) => oc.columns(['tenant_id', 'memory_id', 'session_id']).doNothing())
    .execute();
}

/**
 * The session memories that this session stored again after an earlier session of its subject
 * formed them: they keep their own session_id (provenance), and belong to this one's recall too.
 */
export async function mentionedIn(
  db: Db,
  tenantId: string,
  sessionId: string,
): Promise<{ memoryIds: string[]; formedIn: string[] }> {
  const rows = await db
    .selectFrom('memory_mentions as mm')
    .innerJoin('memories as m', (j) => j.onRef('m.tenant_id', '=', 'mm.tenant_id').onRef('m.id', '=', 'mm.memory_id'))
    .select(['mm.memory_id', 'm.session_id'])
    .where('mm.tenant_id', '=', tenantId)
    .where('mm.session_id', '=', sessionId)
    .execute();
  return {
    memoryIds: rows.map((r) => r.memory_id),
    formedIn: [...new Set(rows.flatMap((r) => (r.session_id ? [r.session_id] : [])))],
  };
}

/**
 * Whether the session memory `m` has outlived its sessions at `now`, as SQL on memories `m`: it is
 * not pinned (a pinned memory never ends with its session), the session it was formed in has
 * expired, and so has every later session that stored it again (or there is none). Such a memory is gone for the store path at once and deleted by the sweeper; one
 * that a live session still mentions stays, so that its reinforcements can still promote it.
 */
export function sessionMemoryGone(now: Date): RawBuilder<SqlBool> {
  return sql<SqlBool>`(NOT m.pinned AND EXISTS (SELECT 1 FROM sessions s WHERE s.tenant_id = m.tenant_id
      AND s.id = m.session_id AND s.expires_at <= ${now})
    AND NOT EXISTS (SELECT 1 FROM memory_mentions mm
      JOIN sessions s ON s.tenant_id = mm.tenant_id AND s.id = mm.session_id
      WHERE mm.tenant_id = m.tenant_id AND mm.memory_id = m.id
        AND (s.expires_at IS NULL OR s.expires_at > ${now})))`;
}

/**
 * A session with the memories stored in it, oldest first: its short-term (`session`) memories and
 * the anchored ones that name it as provenance. Private memories never carry a session. With
 * `changedSince`, only those changed since then (changedSince).
 */
export async function sessionWithMemories(
  core: Core,
  tenantId: string,
  sessionId: string,
  options: { limit: number; offset?: number; changedSince?: Date | undefined; filter?: MemoryFilter | null },
): Promise<{ session: Session; memories: Memory[]; more: boolean }> {
  const filter = options.filter ?? null;
  const session = await getSession(core.db, tenantId, sessionId);
  const now = core.clock();
  const rows = await memoriesWithAnchor(core.db)
    .select(MEMORY_WITH_ANCHOR_COLUMNS)
    .where('m.tenant_id', '=', tenantId)
    .where('m.session_id', '=', session.id)
    .where(unexpired(now))
    .$if(options.changedSince !== undefined, (q) => q.where(changedSince(options.changedSince ?? now)))
    .$if(filter !== null, (q) => q.where(memoryFilterSql(filter as MemoryFilter)))
    .orderBy('m.created_at')
    .orderBy('m.id')
    .offset(options.offset ?? 0)
    .limit(options.limit + 1)
    .execute();
  return {
    session,
    memories: rows.slice(0, options.limit).map((r) => toMemory(r, now)),
    more: rows.length > options.limit,
  };
}

export interface SessionSummary {
  id: string;
  agent_id: string;
  anchor_external_id: string | null;
  status: 'active' | 'ended';
  started_at: string;
}

/** The tenant's most recently started sessions, newest first. */
export async function recentSessions(db: Db, tenantId: string, limit: number): Promise<SessionSummary[]> {
  const rows = await db
    .selectFrom('sessions as s')
    .leftJoin('entities as e', (j) => j.onRef('e.tenant_id', '=', 's.tenant_id').onRef('e.id', '=', 's.anchor_id'))
    .select(['s.id', 's.agent_id', 'e.external_id as anchor_external_id', 's.status', 's.started_at'])
    .where('s.tenant_id', '=', tenantId)
    .orderBy('s.started_at', 'desc')
    .orderBy('s.id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ ...r, started_at: r.started_at.toISOString() }));
}
