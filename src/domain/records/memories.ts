import { sql, type Selectable, type SqlBool } from 'kysely';
import { memoryFilterSql } from '../../db/memory-filter.js';
import type { MemoryFilter } from '../../filter/language.js';
import type { z } from 'zod';
import type { Config } from '../../config.js';
import type { Db } from '../../db/connect.js';
import type { MemoriesTable } from '../../db/schema.js';
import { vectorParam } from '../../db/vector.js';
import { conceptsOf } from '../../text/concepts.js';
import { AppError, notFound } from '../../errors.js';
import type { MemoryObject } from '../../schemas/objects.js';
import { canSeeMemory } from '../tenancy/agent-binding.js';
import { memoryHistory, recordEvent, type AuditEvent } from './audit.js';
import type { Actor, Core } from '../core.js';
import { effectiveConfidence, effectiveConfidenceSql } from '../lifecycle/decay.js';
import { lockMemory } from '../store/memory-lock.js';
import { decodeOffsetCursor, encodeOffsetCursor } from './pagination.js';
import { contentKey, isUuid } from '../text.js';
import type { Binding, AuditAction } from '../../vocabulary.js';

export type Memory = z.output<typeof MemoryObject>;

/** What MEMORY_WITH_ANCHOR_COLUMNS selects. */
export type MemoryRow = Omit<
  Selectable<MemoriesTable>,
  'tenant_id' | 'content_key' | 'concepts' | 'embedding' | 'window_embedding' | 'embedder' | 'search' | 'seq'
> & {
  anchor_external_id: string | null;
};

/** A memory's own columns, as an insert returns them. */
const MEMORY_OWN_COLUMNS = [
  'id',
  'agent_id',
  'content',
  'binding',
  'anchor_id',
  'session_id',
  'status',
  'confidence',
  'decay_rate',
  'reinforcement_count',
  'superseded_by',
  'metadata',
  'created_at',
  'updated_at',
  'last_reinforced_at',
  'occurred_at',
  'superseded_at',
  'expires_at',
  'pinned',
] as const;

/** The names of a list of columns qualified by `m.`, as a tuple type Kysely can check. */
type OfM<T extends readonly string[]> = { readonly [K in keyof T]: `m.${T[K] & string}` };

/** A memory's own columns, as `memories m` holds them (the export reads these). */
export const MEMORY_ROW_COLUMNS = MEMORY_OWN_COLUMNS.map((c) => `m.${c}`) as unknown as OfM<typeof MEMORY_OWN_COLUMNS>;

/** What a Memory is made from: its own columns and its anchor's external id (memoriesWithAnchor). */
export const MEMORY_WITH_ANCHOR_COLUMNS = [...MEMORY_ROW_COLUMNS, 'e.external_id as anchor_external_id'] as const;

/**
 * Not expired at `now`, as SQL on memories `m`: an expired memory leaves the lists at once, before
 * the sweeper deletes it; a pinned one never expires.
 */
export const unexpired = (now: Date) => sql<SqlBool>`(m.expires_at IS NULL OR m.expires_at > ${now} OR m.pinned)`;

/** The audit actions that change what a list shows of a memory: changed_since reads them. */
export const CHANGE_ACTIONS = [
  'created',
  'reinforced',
  'promoted',
  'superseded',
  'merged',
  'corrected',
  'updated',
] as const satisfies readonly AuditAction[];

/**
 * The memory `m` was created, reinforced, superseded, corrected or pinned or given an expiry at or
 * after `since`, by its audit trail: what a client that listed before `since` has not seen.
 */
export const changedSince = (since: Date) =>
  sql<SqlBool>`EXISTS (SELECT 1 FROM audit_events a WHERE a.tenant_id = m.tenant_id AND a.memory_id = m.id
    AND a.at >= ${since} AND a.action = ANY(${[...CHANGE_ACTIONS]}::text[]))`;

/** memories m joined to their anchor e, for the external id every Memory carries. */
export function memoriesWithAnchor(db: Db) {
  return db
    .selectFrom('memories as m')
    .leftJoin('entities as e', (j) => j.onRef('e.tenant_id', '=', 'm.tenant_id').onRef('e.id', '=', 'm.anchor_id'));
}

export function toMemory(row: MemoryRow, now: Date): Memory {
  const confidence = row.pinned
    ? row.confidence
    : effectiveConfidence(row.confidence, row.decay_rate, row.last_reinforced_at, now);
  return {
    id: row.id,
    agent_id: row.agent_id,
    content: row.content,
    binding: row.binding,
    anchor_id: row.anchor_id,
    anchor_external_id: row.anchor_external_id,
    session_id: row.session_id,
    status: row.status,
    confidence: row.confidence,
    effective_confidence: confidence,
    reinforcement_count: row.reinforcement_count,
    superseded_by: row.superseded_by,
    superseded_at: row.superseded_at?.toISOString() ?? null,
    metadata: row.metadata,
    occurred_at: row.occurred_at.toISOString(),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    last_reinforced_at: row.last_reinforced_at.toISOString(),
    expires_at: row.expires_at?.toISOString() ?? null,
    pinned: row.pinned,
  };
}

export async function findMemoryRow(db: Db, tenantId: string, id: string): Promise<MemoryRow | undefined> {
  if (!isUuid(id)) return undefined;
  return memoriesWithAnchor(db)
    .select(MEMORY_WITH_ANCHOR_COLUMNS)
    .where('m.tenant_id', '=', tenantId)
    .where('m.id', '=', id)
    .executeTakeFirst();
}

/** A memory the actor may see: another agent's private memory is answered as a missing one. */
export async function getMemory(core: Core, actor: Actor, id: string): Promise<Memory> {
  const row = await findMemoryRow(core.db, actor.tenantId, id);
  const now = core.clock();
  // Expired is gone, as in the lists, though the sweeper has not deleted it yet.
  if (!row || !canSeeMemory(actor, row) || (!row.pinned && row.expires_at !== null && row.expires_at <= now)) {
    throw notFound('memory');
  }
  return toMemory(row, now);
}

/**
 * A memory's audit events, oldest first. A deleted memory keeps its trail, so history answers as
 * long as events name it; whether a bound actor may see it is memoryHistory's rule, the trail's
 * (a deleted private memory is judged by its events, which carry its binding and its agent).
 */
export async function getMemoryHistory(core: Core, actor: Actor, id: string): Promise<AuditEvent[]> {
  const row = await findMemoryRow(core.db, actor.tenantId, id);
  if (row && !canSeeMemory(actor, row)) throw notFound('memory');
  const events = await memoryHistory(core.db, actor, id);
  if (!row && events.length === 0) throw notFound('memory');
  return events;
}

export interface NewMemory {
  tenantId: string;
  id: string;
  agentId: string;
  content: string;
  binding: Binding;
  anchorId: string | null;
  sessionId: string | null;
  confidence: number;
  metadata: Record<string, unknown> | undefined;
  embedding: Float32Array;
  /** The text embedded with the memory before it in its session (migration 0008); none outside one. */
  windowEmbedding?: Float32Array | undefined;
  now: Date;
  /** When what it says happened or was said; `now` when not known. */
  occurredAt?: Date | undefined;
  /** When it leaves recall and the lists (the sweeper deletes it later); null or left out for never. */
  expiresAt?: Date | null | undefined;
  pinned?: boolean | undefined;
}

/**
 * The one insert of a memory row, canon included: the decay rate follows the binding. Returns the
 * row's own columns as stored (the metadata as jsonb orders it), so that a caller needs no second read.
 */
export async function insertMemory(
  trx: Db,
  m: NewMemory,
  setup: MemorySetup,
): Promise<Omit<MemoryRow, 'anchor_external_id'>> {
  return trx
    .insertInto('memories')
    .values(memoryValues(m, setup))
    .returning(MEMORY_OWN_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** What an insert of memories needs of the deployment: the decay rates and the embedder's id. */
export interface MemorySetup {
  decayPerDay: Config['decayPerDay'];
  embedderId: string;
}

/**
 * Many memories in one statement, in their order (so `seq` follows it): a batch's stores that
 * provably do not interact (batch-group.ts). The statistics triggers fire once for the statement.
 * Answers the rows as insertMemory does, in the order given.
 */
export async function insertMemories(
  trx: Db,
  ms: readonly NewMemory[],
  setup: MemorySetup,
): Promise<Omit<MemoryRow, 'anchor_external_id'>[]> {
  if (ms.length === 0) return [];
  const rows = await trx
    .insertInto('memories')
    .values(ms.map((m) => memoryValues(m, setup)))
    .returning(MEMORY_OWN_COLUMNS)
    .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ms.map((m) => {
    const row = byId.get(m.id);
    if (!row) throw new Error('a memory of the insert came back missing');
    return row;
  });
}

/** A new memory's row: the one mapping behind insertMemory and insertMemories. */
function memoryValues(m: NewMemory, setup: MemorySetup) {
  return {
    tenant_id: m.tenantId,
    id: m.id,
    agent_id: m.agentId,
    content: m.content,
    content_key: contentKey(m.content),
    concepts: conceptsOf(m.content),
    binding: m.binding,
    anchor_id: m.anchorId,
    session_id: m.sessionId,
    confidence: m.confidence,
    decay_rate: setup.decayPerDay[m.binding],
    superseded_by: null,
    metadata: JSON.stringify(m.metadata ?? {}),
    embedding: vectorParam(m.embedding),
    window_embedding: m.windowEmbedding ? vectorParam(m.windowEmbedding) : null,
    embedder: setup.embedderId,
    created_at: m.now,
    updated_at: m.now,
    last_reinforced_at: m.now,
    occurred_at: m.occurredAt ?? m.now,
    expires_at: m.expiresAt ?? null,
    pinned: m.pinned ?? false,
  };
}

/**
 * Hard delete. Canon has its own door (admin scope), so this one refuses it. A delete that waited for
 * a correction, a store or another delete of the same memory finds it as they left it: deleted
 * already is a 404, superseded is still deleted.
 */
export async function deleteMemory(core: Core, actor: Actor, id: string): Promise<void> {
  await core.db.transaction().execute(async (trx) => {
    const seen = await findMemoryRow(trx, actor.tenantId, id);
    if (!seen || !canSeeMemory(actor, seen)) throw notFound('memory');
    if (seen.binding === 'canon') {
      throw new AppError('conflict', 'canon entries are deleted through DELETE /v1/canon/{id} with an admin key');
    }
    // The subject first (the lock order of partition.ts): a purge then erases this delete's event
    // too, or has erased the memory already.
    const row = await lockMemory(trx, actor.tenantId, seen);
    if (!row || !canSeeMemory(actor, row)) throw notFound('memory');
    await trx.deleteFrom('memories').where('tenant_id', '=', actor.tenantId).where('id', '=', id).execute();
    await recordEvent(trx, actor, core.clock(), {
      action: 'deleted',
      agentId: row.agent_id,
      memoryId: id,
      anchorId: row.anchor_id,
      sessionId: row.session_id,
      changes: { binding: row.binding },
    });
  });
}

/**
 * The durable profile: active anchored memories, highest effective confidence first. With
 * `changedSince`, only those changed since then (changedSince), superseded ones included, marked.
 */
export async function anchorProfile(
  core: Core,
  tenantId: string,
  anchorId: string,
  options: {
    limit: number;
    cursor?: string | undefined;
    status?: 'active' | 'superseded';
    changedSince?: Date | undefined;
    filter?: MemoryFilter | null;
  },
): Promise<{ memories: Memory[]; more: boolean; nextCursor: string | null }> {
  const filter = options.filter ?? null;
  const offset = decodeOffsetCursor(options.cursor);
  const now = core.clock();
  const status = options.status ?? 'active';
  const since = options.changedSince;
  const rows = await memoriesWithAnchor(core.db)
    .select(MEMORY_WITH_ANCHOR_COLUMNS)
    .where('m.tenant_id', '=', tenantId)
    .where('m.anchor_id', '=', anchorId)
    .where('m.binding', '=', 'anchored')
    // changed_since includes the superseded, marked; status=superseded asks for them only.
    .$if(since === undefined || status === 'superseded', (q) => q.where('m.status', '=', status))
    .$if(since !== undefined, (q) => q.where(changedSince(since ?? now)))
    .where(unexpired(now))
    .$if(filter !== null, (q) => q.where(memoryFilterSql(filter as MemoryFilter)))
    // Superseded memories by when they were replaced, latest first.
    .orderBy(status === 'active' ? effectiveConfidenceSql(now) : sql`m.superseded_at`, 'desc')
    .orderBy('m.id')
    .offset(offset)
    .limit(options.limit + 1)
    .execute();
  const more = rows.length > options.limit;
  return {
    memories: rows.slice(0, options.limit).map((r) => toMemory(r, now)),
    more,
    nextCursor: more ? encodeOffsetCursor(offset + options.limit) : null,
  };
}
