import { sql } from 'kysely';
import type { Db } from './connect.js';
import { vectorParam } from './vector.js';

/**
 * The statements of `agent-memory reembed` (src/reembed.ts): each kind of work, found a page at a
 * time in key order from where the last page ended, and written a page per transaction.
 */

/** Where the last page ended, in (tenant, id) order. */
export interface MemoryKey {
  tenantId: string;
  id: string;
}

/** Where the last page of windows ended, in (tenant, session, seq) order. */
export interface SessionPlace {
  tenantId: string;
  sessionId: string;
  seq: number;
}

/** How many memories another embedder than `embedderId` embedded. */
export async function countForeignVectors(db: Db, embedderId: string): Promise<number> {
  const { total } = await db
    .selectFrom('memories')
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .where('embedder', '<>', embedderId)
    .executeTakeFirstOrThrow();
  return Number(total);
}

/** The next page of memories another embedder embedded, after `after`. */
export async function foreignVectorsPage(db: Db, embedderId: string, after: MemoryKey | null, limit: number) {
  let query = db
    .selectFrom('memories')
    .select(['tenant_id', 'id', 'content', 'content_key', 'binding'])
    .where('embedder', '<>', embedderId);
  if (after) {
    const { tenantId, id } = after;
    query = query.where((eb) =>
      eb.or([eb('tenant_id', '>', tenantId), eb.and([eb('tenant_id', '=', tenantId), eb('id', '>', id)])]),
    );
  }
  return query.orderBy('tenant_id').orderBy('id').limit(limit).execute();
}

/** Writes each memory's new vector and its embedder; its window goes, made by the other embedder too. */
export async function setVectors(
  db: Db,
  embedderId: string,
  vectors: readonly { key: MemoryKey; vector: Float32Array }[],
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const { key, vector } of vectors) {
      await trx
        .updateTable('memories')
        .set({ embedding: vectorParam(vector), window_embedding: null, embedder: embedderId })
        .where('tenant_id', '=', key.tenantId)
        .where('id', '=', key.id)
        .execute();
    }
  });
}

/** How many memories have no concepts yet (stored before migration 0010). */
export async function countMissingConcepts(db: Db): Promise<number> {
  const { n } = await db
    .selectFrom('memories')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('concepts', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(n);
}

/** The next page of memories without concepts, after `after`. */
export async function missingConceptsPage(db: Db, after: MemoryKey | null, limit: number) {
  let query = db.selectFrom('memories').select(['tenant_id', 'id', 'content']).where('concepts', 'is', null);
  if (after) query = query.where(sql<boolean>`(tenant_id, id) > (${after.tenantId}, ${after.id})`);
  return query.orderBy('tenant_id').orderBy('id').limit(limit).execute();
}

/** Writes each memory's concepts, unless it has some by now. The statistics follow by trigger (0010). */
export async function setConcepts(db: Db, concepts: readonly { key: MemoryKey; concepts: string }[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const c of concepts) {
      await trx
        .updateTable('memories')
        .set({ concepts: c.concepts })
        .where('tenant_id', '=', c.key.tenantId)
        .where('id', '=', c.key.id)
        .where('concepts', 'is', null)
        .execute();
    }
  });
}

/** Session memories with a memory before them and no window vector, among those `embedderId` embedded. */
function missingWindows(db: Db, embedderId: string) {
  return db
    .selectFrom('memories as m')
    .innerJoinLateral(
      (eb) =>
        eb
          .selectFrom('memories as x')
          .select(['x.id as previous_id', 'x.content as previous'])
          .whereRef('x.tenant_id', '=', 'm.tenant_id')
          .whereRef('x.session_id', '=', 'm.session_id')
          .whereRef('x.seq', '<', 'm.seq')
          .orderBy('x.seq', 'desc')
          .limit(1)
          .as('p'),
      (join) => join.onTrue(),
    )
    .where('m.session_id', 'is not', null)
    .where('m.window_embedding', 'is', null)
    .where('m.embedder', '=', embedderId);
}

export async function countMissingWindows(db: Db, embedderId: string): Promise<number> {
  const { n } = await missingWindows(db, embedderId)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(n);
}

/** The next page of memories missing their window, with the memory before each, after `after`. */
export async function missingWindowsPage(db: Db, embedderId: string, after: SessionPlace | null, limit: number) {
  let query = missingWindows(db, embedderId).select([
    'm.tenant_id',
    'm.id',
    'm.session_id',
    'm.seq',
    'm.content',
    'p.previous_id',
    'p.previous',
  ]);
  if (after) {
    const { tenantId, sessionId, seq } = after;
    query = query.where(sql<boolean>`(m.tenant_id, m.session_id, m.seq) > (${tenantId}, ${sessionId}, ${seq})`);
  }
  return query.orderBy('m.tenant_id').orderBy('m.session_id').orderBy('m.seq').limit(limit).execute();
}

/**
 * Writes each memory's window vector, only while the memory it was built from is still there: a
 * window never outlives that text.
 */
export async function setWindows(
  db: Db,
  windows: readonly { key: MemoryKey; previousId: string; vector: Float32Array }[],
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const w of windows) {
      await trx
        .updateTable('memories as m')
        .set({ window_embedding: vectorParam(w.vector) })
        .where('m.tenant_id', '=', w.key.tenantId)
        .where('m.id', '=', w.key.id)
        .where('m.window_embedding', 'is', null)
        .where((eb) =>
          eb.exists(
            eb
              .selectFrom('memories as x')
              .select('x.id')
              .where('x.tenant_id', '=', w.key.tenantId)
              .where('x.id', '=', w.previousId),
          ),
        )
        .execute();
    }
  });
}
