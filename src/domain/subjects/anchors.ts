import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { z } from 'zod';
import type { Db } from '../../db/connect.js';
import { executePrepared } from '../../db/prepared.js';
import type { EntitiesTable } from '../../db/schema.js';
import { AppError, notFound } from '../../errors.js';
import type { AnchorObject } from '../../schemas/objects.js';
import { decodeTimeIdCursor, toPage, type Page } from '../records/pagination.js';
import { isUuid, newId } from '../text.js';

/** Anchors are the entities of kind 'subject'. */
const SUBJECT = 'subject';

export type Anchor = z.output<typeof AnchorObject>;

type AnchorRow = Pick<Selectable<EntitiesTable>, 'id' | 'external_id' | 'name' | 'attributes' | 'created_at'> & {
  memory_count: number;
  last_activity_at: Date | string | null;
};

const toAnchor = (r: AnchorRow): Anchor => ({
  id: r.id,
  anchor_external_id: r.external_id,
  name: r.name,
  metadata: r.attributes,
  created_at: r.created_at.toISOString(),
  memory_count: Number(r.memory_count),
  last_activity_at: r.last_activity_at === null ? null : new Date(r.last_activity_at).toISOString(),
});

function anchorQuery(db: Db, tenantId: string) {
  return db
    .selectFrom('entities as e')
    .select([
      'e.id',
      'e.external_id',
      'e.name',
      'e.attributes',
      'e.created_at',
      // What the subject's profile lists (anchorProfile in memories.ts): its active durable memories.
      // Its sessions' short-term memories carry its anchor_id too, but the profile does not show them.
      sql<number>`(SELECT count(*) FROM memories m
        WHERE m.tenant_id = e.tenant_id AND m.anchor_id = e.id
          AND m.binding = 'anchored' AND m.status = 'active')`.as('memory_count'),
      // The last change to any of its memories (stored, reinforced, superseded, corrected).
      sql<Date | string | null>`(SELECT max(m.updated_at) FROM memories m
        WHERE m.tenant_id = e.tenant_id AND m.anchor_id = e.id)`.as('last_activity_at'),
    ])
    .where('e.tenant_id', '=', tenantId)
    .where('e.kind', '=', SUBJECT);
}

export async function getAnchor(db: Db, tenantId: string, id: string): Promise<Anchor> {
  if (!isUuid(id)) throw notFound('anchor');
  const row = await anchorQuery(db, tenantId).where('e.id', '=', id).executeTakeFirst();
  if (!row) throw notFound('anchor');
  return toAnchor(row);
}

/** The id of the subject named by external id, as a scalar subquery: NULL when there is none. */
export function subjectIdByExternalId(tenantId: string, externalId: string): RawBuilder<string | null> {
  return sql<string | null>`(SELECT e.id FROM entities AS e
    WHERE e.tenant_id = ${tenantId} AND e.kind = ${SUBJECT} AND e.external_id = ${externalId})`;
}

export async function findAnchorIdByExternalId(db: Db, tenantId: string, externalId: string): Promise<string | null> {
  // Prepared: on recall's hot path with the statements that follow (src/db/prepared.ts).
  const query = sql<{ id: string | null }>`SELECT ${subjectIdByExternalId(tenantId, externalId)} AS id`;
  return (await executePrepared(db, query.compile(db))).rows[0]?.id ?? null;
}

/** The external id of subject `id`: what a memory of it carries besides its anchor_id. */
export async function anchorExternalId(db: Db, tenantId: string, id: string): Promise<string | null> {
  const row = await db
    .selectFrom('entities')
    .select('external_id')
    .where('tenant_id', '=', tenantId)
    .where('kind', '=', SUBJECT)
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.external_id ?? null;
}

/** The subject's row, looked up by id; with `lock`, held FOR KEY SHARE until the transaction ends. */
async function findSubject(db: Db, tenantId: string, id: string, lock: boolean): Promise<boolean> {
  if (!isUuid(id)) return false;
  const query = db
    .selectFrom('entities')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('kind', '=', SUBJECT)
    .where('id', '=', id);
  if (lock) return (await query.forKeyShare().executeTakeFirst()) !== undefined;
  // Prepared: recall checks its anchor so (src/db/prepared.ts).
  return (await executePrepared(db, query.compile())).rows.length > 0;
}

/**
 * Holds the subject's row until the transaction ends (FOR KEY SHARE, the first lock of the order in
 * partition.ts): a purge (FOR UPDATE) waits for every holder, and a writer that waited for a purge
 * finds no row. False when there is no such subject (any more).
 */
export function lockAnchor(db: Db, tenantId: string, id: string): Promise<boolean> {
  return findSubject(db, tenantId, id, true);
}

/**
 * A first use that loses the race to another finds the winner's row on its next look, unless a
 * purge erased it meanwhile; past this many such rounds, give up.
 */
const CLAIM_ATTEMPTS = 5;

/**
 * Creates the anchor unless the external id exists, and holds it as lockAnchor does. The existing
 * row is looked for first: nearly every store names a subject that exists, and then one statement
 * does. ON CONFLICT makes concurrent first uses of one external id agree on a single row (the loser
 * finds the winner's on its next attempt); a purge that erases the row meanwhile makes the next
 * attempt a first use again (docs/api.md §4: an unknown external id creates).
 */
export async function upsertAnchor(
  db: Db,
  tenantId: string,
  now: Date,
  input: { externalId: string; name?: string | null | undefined; metadata?: Record<string, unknown> | undefined },
): Promise<{ id: string; created: boolean }> {
  for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
    const existing = await db
      .selectFrom('entities')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('kind', '=', SUBJECT)
      .where('external_id', '=', input.externalId)
      .forKeyShare()
      .executeTakeFirst();
    if (existing) return { id: existing.id, created: false };
    const inserted = await db
      .insertInto('entities')
      .values({
        tenant_id: tenantId,
        id: newId(),
        kind: SUBJECT,
        external_id: input.externalId,
        name: input.name ?? null,
        attributes: JSON.stringify(input.metadata ?? {}),
        created_at: now,
      })
      .onConflict((oc) => oc.columns(['tenant_id', 'kind', 'external_id']).doNothing())
      .returning('id')
      .executeTakeFirst();
    if (inserted) return { id: inserted.id, created: true };
  }
  throw new AppError('conflict', 'the subject was purged again and again while being named; retry');
}

export interface AnchorRef {
  anchorId?: string | undefined;
  anchorExternalId?: string | undefined;
}

/** Whether the subject exists: one index probe, not getAnchor's count of its memories. */
function anchorExists(db: Db, tenantId: string, id: string): Promise<boolean> {
  return findSubject(db, tenantId, id, false);
}

/**
 * Turns the two ways of naming a subject into one anchor id. With `createAt` (writers), an unknown
 * external id becomes a new anchor created then, and the anchor is held until the transaction ends
 * (lockAnchor), so that what the writer then adds cannot outlive a purge or slip in half-way through
 * one. Without it nothing is written, and an unknown external id matches nothing.
 * Returns undefined when neither is given, null when nothing matches and nothing is created.
 */
export async function resolveAnchor(
  db: Db,
  tenantId: string,
  ref: AnchorRef,
  options: { createAt?: Date | undefined } = {},
): Promise<string | null | undefined> {
  const now = options.createAt;
  let byId: string | undefined;
  if (ref.anchorId !== undefined) {
    const found =
      now !== undefined ? await lockAnchor(db, tenantId, ref.anchorId) : await anchorExists(db, tenantId, ref.anchorId);
    if (!found) throw notFound('anchor');
    byId = ref.anchorId;
  }
  if (ref.anchorExternalId === undefined) return byId;
  const byExternal =
    now !== undefined
      ? (await upsertAnchor(db, tenantId, now, { externalId: ref.anchorExternalId })).id
      : await findAnchorIdByExternalId(db, tenantId, ref.anchorExternalId);
  if (byId !== undefined && byExternal !== byId) {
    throw new AppError('conflict', 'anchor_id and anchor_external_id name different anchors');
  }
  return byExternal;
}

export async function listAnchors(
  db: Db,
  tenantId: string,
  options: {
    externalId?: string | undefined;
    externalIdPrefix?: string | undefined;
    limit: number;
    cursor?: string | undefined;
  },
): Promise<Page<Anchor>> {
  let query = anchorQuery(db, tenantId);
  if (options.externalId !== undefined) query = query.where('e.external_id', '=', options.externalId);
  // starts_with, not LIKE: the prefix is the user's text, and % or _ in it must match themselves.
  if (options.externalIdPrefix !== undefined) {
    query = query.where(sql<boolean>`starts_with(e.external_id, ${options.externalIdPrefix})`);
  }
  if (options.cursor) {
    const [createdAt, id] = decodeTimeIdCursor(options.cursor);
    query = query.where(sql<boolean>`(e.created_at, e.id) > (${createdAt}::timestamptz, ${id}::uuid)`);
  }
  const rows = await query
    .orderBy('e.created_at')
    .orderBy('e.id')
    .limit(options.limit + 1)
    .execute();
  return toPage(rows, options.limit, (r) => [r.created_at.toISOString(), r.id], toAnchor);
}
