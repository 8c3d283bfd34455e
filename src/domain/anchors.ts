import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { AppError, notFound } from '../errors.js';
import type { Core } from './core.js';
import { decodeTimeIdCursor, toPage, type Page } from './pagination.js';
import { isUuid, newId } from './text.js';

/** Anchors are the entities of kind 'subject'. */
const SUBJECT = 'subject';

export interface Anchor {
  id: string;
  anchor_external_id: string;
  name: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
  memory_count: number;
}

interface AnchorRow {
  id: string;
  external_id: string;
  name: string | null;
  attributes: Record<string, unknown>;
  created_at: Date;
  memory_count: number;
}

const toAnchor = (r: AnchorRow): Anchor => ({
  id: r.id,
  anchor_external_id: r.external_id,
  name: r.name,
  metadata: r.attributes,
  created_at: r.created_at.toISOString(),
  memory_count: Number(r.memory_count),
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
      // Active memories bound to the subject, durable or from its sessions.
      sql<number>`(SELECT count(*) FROM memories m
        WHERE m.tenant_id = e.tenant_id AND m.anchor_id = e.id AND m.status = 'active')`.as('memory_count'),
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

export async function findAnchorIdByExternalId(db: Db, tenantId: string, externalId: string): Promise<string | null> {
  const row = await db
    .selectFrom('entities')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('kind', '=', SUBJECT)
    .where('external_id', '=', externalId)
    .executeTakeFirst();
  return row?.id ?? null;
}

/**
 * Creates the anchor unless the external id exists. ON CONFLICT makes concurrent first uses of
 * one external id agree on a single row.
 */
export async function upsertAnchor(
  db: Db,
  core: Core,
  tenantId: string,
  input: { externalId: string; name?: string | null | undefined; metadata?: Record<string, unknown> | undefined },
): Promise<{ id: string; created: boolean }> {
  const inserted = await db
    .insertInto('entities')
    .values({
      tenant_id: tenantId,
      id: newId(),
      kind: SUBJECT,
      external_id: input.externalId,
      name: input.name ?? null,
      attributes: JSON.stringify(input.metadata ?? {}),
      created_at: core.clock(),
    })
    .onConflict((oc) => oc.columns(['tenant_id', 'kind', 'external_id']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted) return { id: inserted.id, created: true };
  const existing = await findAnchorIdByExternalId(db, tenantId, input.externalId);
  if (!existing) throw new Error('anchor vanished between insert and select');
  return { id: existing, created: false };
}

export interface AnchorRef {
  anchorId?: string | undefined;
  anchorExternalId?: string | undefined;
}

/**
 * Turns the two ways of naming a subject into one anchor id. `create` makes an unknown external
 * id into a new anchor (stores do, recall never does: there it simply matches nothing).
 * Returns undefined when neither is given, null when nothing matches and `create` is off.
 */
export async function resolveAnchor(
  db: Db,
  core: Core,
  tenantId: string,
  ref: AnchorRef,
  create: boolean,
): Promise<string | null | undefined> {
  let byId: string | undefined;
  if (ref.anchorId !== undefined) {
    byId = (await getAnchor(db, tenantId, ref.anchorId)).id;
  }
  if (ref.anchorExternalId === undefined) return byId;
  const byExternal = create
    ? (await upsertAnchor(db, core, tenantId, { externalId: ref.anchorExternalId })).id
    : await findAnchorIdByExternalId(db, tenantId, ref.anchorExternalId);
  if (byId !== undefined && byExternal !== byId) {
    throw new AppError('conflict', 'anchor_id and anchor_external_id name different anchors');
  }
  return byExternal;
}

export async function listAnchors(
  db: Db,
  tenantId: string,
  options: { externalId?: string | undefined; limit: number; cursor?: string | undefined },
): Promise<Page<Anchor>> {
  let query = anchorQuery(db, tenantId);
  if (options.externalId !== undefined) query = query.where('e.external_id', '=', options.externalId);
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
