import { getAnchor, type Anchor } from '../domain/subjects/anchors.js';
import { canSeeMemory } from '../domain/tenancy/agent-binding.js';
import type { Actor, Core } from '../domain/core.js';
import { MEMORY_WITH_ANCHOR_COLUMNS, memoriesWithAnchor, toMemory, type Memory } from '../domain/records/memories.js';
import { anchorSessions, type Session } from '../domain/subjects/sessions.js';
import { sql } from 'kysely';
import { memoryFilterSql } from '../db/memory-filter.js';
import type { MemoryFilter } from '../filter/language.js';

/**
 * Everything bound to one subject, for the subject (access and portability, beside erasure): the
 * anchor, its memories of every binding and status with their history fields, and its sessions,
 * read in one snapshot. A subject's data is bounded, so this is one JSON document, not a stream.
 */
export interface SubjectExport {
  format: 'agent-memory-subject';
  version: 1;
  exported_at: string;
  anchor: Anchor;
  sessions: Session[];
  memories: (Memory & { mentioned_in_sessions: string[] })[];
}

/** `filter`: only the memories that pass it (docs/api.md, "Filters"); the anchor and its sessions whole. */
export async function exportSubject(
  core: Core,
  actor: Actor,
  anchorId: string,
  filter: MemoryFilter | null = null,
): Promise<SubjectExport> {
  return core.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const anchor = await getAnchor(trx, actor.tenantId, anchorId);
      const sessions = await anchorSessions(trx, actor.tenantId, anchor.id);
      const rows = await memoriesWithAnchor(trx)
        .select([
          ...MEMORY_WITH_ANCHOR_COLUMNS,
          sql<string[]>`coalesce((SELECT json_agg(mm.session_id ORDER BY mm.session_id) FROM memory_mentions mm
            WHERE mm.tenant_id = m.tenant_id AND mm.memory_id = m.id), '[]'::json)`.as('mentioned_in_sessions'),
        ])
        .where('m.tenant_id', '=', actor.tenantId)
        .where('m.anchor_id', '=', anchor.id)
        .$if(filter !== null, (q) => q.where(memoryFilterSql(filter as MemoryFilter)))
        .orderBy('m.seq')
        .execute();
      const now = core.clock();
      return {
        format: 'agent-memory-subject',
        version: 1,
        exported_at: now.toISOString(),
        anchor,
        sessions,
        // Memories bound to a subject are never private, so a key bound to agents sees them all;
        // the check stays so that this holds if the bindings ever change.
        memories: rows
          .filter((r) => canSeeMemory(actor, r))
          .map((r) => ({ ...toMemory(r, now), mentioned_in_sessions: r.mentioned_in_sessions })),
      };
    });
}
