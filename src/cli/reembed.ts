import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { sql } from 'kysely';
import { openDatabase, type Db, type DbHandle } from '../db/connect.js';
import { migrate } from '../db/migrate.js';
import { dropVectorIndex, vectorIndexDimensions, vectorParam } from '../db/vector.js';
import type { Embedder } from '../embedding/embedder.js';
import { EmbeddingError } from '../embedding/http.js';
import { createEmbedder } from '../embedding/factory.js';
import { windowText } from '../domain/windows.js';
import { conceptsOf } from '../text/concepts.js';
import { progressBar } from './progress.js';

/**
 * `agent-memory reembed`: re-embeds every memory whose vector another embedder made, with the
 * configured one, so that a deployment can change EMBEDDER (the server refuses to start on mixed or
 * foreign vectors); then embeds the window vector (migration 0008) of every session memory that has
 * a memory before it and no window: memories stored before 0.7.0, imported ones, corrections, and
 * those whose window went with a deleted memory; and computes the concepts (migration 0010) of every
 * memory stored before they were. Stop the servers first. It works in batches and can be
 * interrupted: a second run carries on with what is left, and the server starts again once nothing
 * is left.
 */

export interface ReembedProgress {
  done: number;
  total: number;
}

const DEFAULT_BATCH_SIZE = 64;

export async function reembedMemories(
  handle: Pick<DbHandle, 'db'>,
  embedder: Embedder,
  options: { batchSize?: number; onProgress?: (p: ReembedProgress) => void } = {},
): Promise<{ reembedded: number; windows: number; concepts: number }> {
  const { db } = handle;
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError('batch size must be a positive integer');
  // Migrations, but not the embedder check: the point is to fix what it would refuse.
  await migrate(db);
  const { total } = await db
    .selectFrom('memories')
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .where('embedder', '<>', embedder.id)
    .executeTakeFirstOrThrow();
  const count = Number(total);
  options.onProgress?.({ done: 0, total: count });
  if (count > 0) {
    // An index over vectors of another size would refuse the new ones.
    for (const d of await vectorIndexDimensions(db)) if (d !== embedder.dimensions) await dropVectorIndex(db, d);
  }
  let done = 0;
  let after: { tenantId: string; id: string } | null = null;
  for (;;) {
    let query = db
      .selectFrom('memories')
      .select(['tenant_id', 'id', 'content', 'content_key', 'binding'])
      .where('embedder', '<>', embedder.id);
    if (after) {
      const { tenantId, id } = after;
      query = query.where((eb) =>
        eb.or([eb('tenant_id', '>', tenantId), eb.and([eb('tenant_id', '=', tenantId), eb('id', '>', id)])]),
      );
    }
    const rows = await query.orderBy('tenant_id').orderBy('id').limit(batchSize).execute();
    if (rows.length === 0) break;
    // Canon is embedded by its normalized text (src/domain/canon.ts), every other memory by its content.
    const vectors = await embedder.embed(rows.map((r) => (r.binding === 'canon' ? r.content_key : r.content)));
    await db.transaction().execute(async (trx) => {
      for (const [i, r] of rows.entries()) {
        const vector = vectors[i];
        if (!vector) throw new Error('embedder returned too few vectors');
        await trx
          .updateTable('memories')
          // Its window was made by the other embedder too: it is embedded again below.
          .set({ embedding: vectorParam(vector), window_embedding: null, embedder: embedder.id })
          .where('tenant_id', '=', r.tenant_id)
          .where('id', '=', r.id)
          .execute();
      }
    });
    done += rows.length;
    options.onProgress?.({ done, total: Math.max(count, done) });
    const last = rows[rows.length - 1];
    if (last) after = { tenantId: last.tenant_id, id: last.id };
  }
  // Then the windows: those never made, and those of the memories just re-embedded, which lost theirs.
  const windows = await windowsMissing(db, embedder.id);
  if (windows > 0) options.onProgress?.({ done, total: done + windows });
  const filled = await fillWindows(db, embedder, batchSize, (n) => {
    options.onProgress?.({ done: done + n, total: done + Math.max(windows, n) });
  });
  // Then the concepts of the memories stored before migration 0010.
  const base = done + filled;
  const missing = Number(
    (
      await db
        .selectFrom('memories')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('concepts', 'is', null)
        .executeTakeFirstOrThrow()
    ).n,
  );
  if (missing > 0) options.onProgress?.({ done: base, total: base + missing });
  const concepts = await fillConcepts(db, batchSize, (n) => {
    options.onProgress?.({ done: base + n, total: base + Math.max(missing, n) });
  });
  // Records the embedder and builds the index for its size; refuses if anything was left behind.
  await migrate(db, embedder);
  return { reembedded: done, windows: filled, concepts };
}

/**
 * Computes the concepts of the memories that have none yet (stored before migration 0010), in
 * (tenant, id) order; returns how many. The statistics follow by trigger (0010).
 */
async function fillConcepts(db: Db, batchSize: number, onProgress: (done: number) => void): Promise<number> {
  let done = 0;
  let after: { tenantId: string; id: string } | null = null;
  for (;;) {
    let query = db.selectFrom('memories').select(['tenant_id', 'id', 'content']).where('concepts', 'is', null);
    if (after) query = query.where(sql<boolean>`(tenant_id, id) > (${after.tenantId}, ${after.id})`);
    const rows = await query.orderBy('tenant_id').orderBy('id').limit(batchSize).execute();
    if (rows.length === 0) return done;
    await db.transaction().execute(async (trx) => {
      for (const r of rows) {
        await trx
          .updateTable('memories')
          .set({ concepts: conceptsOf(r.content) })
          .where('tenant_id', '=', r.tenant_id)
          .where('id', '=', r.id)
          .where('concepts', 'is', null)
          .execute();
      }
    });
    done += rows.length;
    onProgress(done);
    const last = rows[rows.length - 1];
    if (last) after = { tenantId: last.tenant_id, id: last.id };
  }
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

async function windowsMissing(db: Db, embedderId: string): Promise<number> {
  const { n } = await missingWindows(db, embedderId)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(n);
}

/** Embeds the missing windows (windows.ts) in (tenant, session, seq) order; returns how many. */
async function fillWindows(
  db: Db,
  embedder: Embedder,
  batchSize: number,
  onProgress: (done: number) => void,
): Promise<number> {
  let done = 0;
  let after: { tenantId: string; sessionId: string; seq: number } | null = null;
  for (;;) {
    let query = missingWindows(db, embedder.id).select([
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
    const rows = await query.orderBy('m.tenant_id').orderBy('m.session_id').orderBy('m.seq').limit(batchSize).execute();
    if (rows.length === 0) return done;
    const vectors = await embedder.embed(rows.map((r) => windowText(r.previous, r.content)));
    await db.transaction().execute(async (trx) => {
      for (const [i, r] of rows.entries()) {
        const vector = vectors[i];
        if (!vector) throw new Error('embedder returned too few vectors');
        // Only while the memory it was built from is still there: a window never outlives that text.
        await trx
          .updateTable('memories as m')
          .set({ window_embedding: vectorParam(vector) })
          .where('m.tenant_id', '=', r.tenant_id)
          .where('m.id', '=', r.id)
          .where('m.window_embedding', 'is', null)
          .where((eb) =>
            eb.exists(
              eb
                .selectFrom('memories as x')
                .select('x.id')
                .where('x.tenant_id', '=', r.tenant_id)
                .where('x.id', '=', r.previous_id),
            ),
          )
          .execute();
      }
    });
    done += rows.length;
    onProgress(done);
    const last = rows[rows.length - 1];
    if (last?.session_id) after = { tenantId: last.tenant_id, sessionId: last.session_id, seq: Number(last.seq) };
  }
}

export async function reembed(config: Config, args: string[]): Promise<void> {
  let batchSize = DEFAULT_BATCH_SIZE;
  try {
    const { values } = parseArgs({ args, options: { 'batch-size': { type: 'string' } } });
    if (values['batch-size'] !== undefined) batchSize = Number(values['batch-size']);
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error('--batch-size must be a positive integer');
  } catch (error) {
    process.stderr.write(`agent-memory reembed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 2;
    return;
  }
  let embedder: Embedder;
  try {
    embedder = await createEmbedder(config);
  } catch (error) {
    if (!(error instanceof EmbeddingError)) throw error;
    process.stderr.write(`agent-memory reembed: ${error.message}\n`);
    process.exitCode = 1;
    return;
  }
  try {
    const handle = await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      poolSize: config.dbPoolSize,
    });
    try {
      const bar = progressBar('reembed');
      const { reembedded, windows, concepts } = await reembedMemories(handle, embedder, {
        batchSize,
        onProgress: ({ done, total }) => bar.update(done, total),
      });
      bar.end();
      process.stderr.write(
        `re-embedded ${reembedded} memories with ${embedder.id}, embedded ${windows} window vectors, ` +
          `computed the concepts of ${concepts} memories\n`,
      );
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (!(error instanceof EmbeddingError)) throw error;
    process.stderr.write(`\nagent-memory reembed: ${error.message}; run it again to carry on\n`);
    process.exitCode = 1;
  } finally {
    await embedder.close();
  }
}
