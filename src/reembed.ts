import type { Config } from './config.js';
import { openDatabase, type Db, type DbHandle } from './db/connect.js';
import { migrate } from './db/migrate.js';
import {
  countForeignVectors,
  countMissingConcepts,
  countMissingWindows,
  foreignVectorsPage,
  missingConceptsPage,
  missingWindowsPage,
  setConcepts,
  setVectors,
  setWindows,
  type MemoryKey,
  type SessionPlace,
} from './db/reembed.js';
import { dropVectorIndex, vectorIndexDimensions } from './db/vector.js';
import { windowText } from './domain/store/windows.js';
import type { Embedder } from './embedding/embedder.js';
import { conceptsOf } from './text/concepts.js';

/**
 * `agent-memory reembed` (src/cli/reembed.ts): re-embeds every memory whose vector another embedder
 * made, with the configured one, so that a deployment can change EMBEDDER (the server refuses to
 * start on mixed or foreign vectors); then embeds the window vector (migration 0008) of every
 * session memory that has a memory before it and no window: memories stored before 0.7.0, imported
 * ones, corrections, and those whose window went with a deleted memory; and computes the concepts
 * (migration 0010) of every memory stored before they were. Stop the servers first. It works in
 * batches and can be interrupted: a second run carries on with what is left, and the server starts
 * again once nothing is left. The statements are in src/db/reembed.ts.
 */

export interface ReembedProgress {
  done: number;
  total: number;
}

export interface ReembedOptions {
  batchSize?: number;
  onProgress?: (p: ReembedProgress) => void;
}

export interface Reembedded {
  reembedded: number;
  windows: number;
  concepts: number;
}

export const DEFAULT_BATCH_SIZE = 64;

/** Opens the configured database (without starting the core, whose embedder check would refuse), re-embeds, closes. */
export async function reembedDatabase(
  config: Config,
  embedder: Embedder,
  options: ReembedOptions,
): Promise<Reembedded> {
  const handle = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.dbPoolSize,
  });
  try {
    return await reembedMemories(handle, embedder, options);
  } finally {
    await handle.close();
  }
}

export async function reembedMemories(
  handle: Pick<DbHandle, 'db'>,
  embedder: Embedder,
  options: ReembedOptions = {},
): Promise<Reembedded> {
  const { db } = handle;
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError('batch size must be a positive integer');
  // Migrations, but not the embedder check: the point is to fix what it would refuse.
  await migrate(db);
  const count = await countForeignVectors(db, embedder.id);
  options.onProgress?.({ done: 0, total: count });
  if (count > 0) {
    // An index over vectors of another size would refuse the new ones.
    for (const d of await vectorIndexDimensions(db)) if (d !== embedder.dimensions) await dropVectorIndex(db, d);
  }
  let done = 0;
  let after: MemoryKey | null = null;
  for (;;) {
    const rows = await foreignVectorsPage(db, embedder.id, after, batchSize);
    if (rows.length === 0) break;
    // Canon is embedded by its normalized text (src/domain/records/canon.ts), every other memory by its content.
    const vectors = await embedder.embed(rows.map((r) => (r.binding === 'canon' ? r.content_key : r.content)));
    await setVectors(
      db,
      embedder.id,
      rows.map((r, i) => ({ key: { tenantId: r.tenant_id, id: r.id }, vector: vectorAt(vectors, i) })),
    );
    done += rows.length;
    options.onProgress?.({ done, total: Math.max(count, done) });
    const last = rows[rows.length - 1];
    if (last) after = { tenantId: last.tenant_id, id: last.id };
  }
  // Then the windows: those never made, and those of the memories just re-embedded, which lost theirs.
  const windows = await countMissingWindows(db, embedder.id);
  if (windows > 0) options.onProgress?.({ done, total: done + windows });
  const filled = await fillWindows(db, embedder, batchSize, (n) => {
    options.onProgress?.({ done: done + n, total: done + Math.max(windows, n) });
  });
  // Then the concepts of the memories stored before migration 0010.
  const base = done + filled;
  const missing = await countMissingConcepts(db);
  if (missing > 0) options.onProgress?.({ done: base, total: base + missing });
  const concepts = await fillConcepts(db, batchSize, (n) => {
    options.onProgress?.({ done: base + n, total: base + Math.max(missing, n) });
  });
  // Records the embedder and builds the index for its size; refuses if anything was left behind.
  await migrate(db, embedder);
  return { reembedded: done, windows: filled, concepts };
}

function vectorAt(vectors: readonly Float32Array[], i: number): Float32Array {
  const vector = vectors[i];
  if (!vector) throw new Error('embedder returned too few vectors');
  return vector;
}

/** Computes the concepts of the memories that have none yet, in (tenant, id) order; returns how many. */
async function fillConcepts(db: Db, batchSize: number, onProgress: (done: number) => void): Promise<number> {
  let done = 0;
  let after: MemoryKey | null = null;
  for (;;) {
    const rows = await missingConceptsPage(db, after, batchSize);
    if (rows.length === 0) return done;
    await setConcepts(
      db,
      rows.map((r) => ({ key: { tenantId: r.tenant_id, id: r.id }, concepts: conceptsOf(r.content) })),
    );
    done += rows.length;
    onProgress(done);
    const last = rows[rows.length - 1];
    if (last) after = { tenantId: last.tenant_id, id: last.id };
  }
}

/** Embeds the missing windows (src/domain/store/windows.ts) in (tenant, session, seq) order; returns how many. */
async function fillWindows(
  db: Db,
  embedder: Embedder,
  batchSize: number,
  onProgress: (done: number) => void,
): Promise<number> {
  let done = 0;
  let after: SessionPlace | null = null;
  for (;;) {
    const rows = await missingWindowsPage(db, embedder.id, after, batchSize);
    if (rows.length === 0) return done;
    const vectors = await embedder.embed(rows.map((r) => windowText(r.previous, r.content)));
    await setWindows(
      db,
      rows.map((r, i) => ({
        key: { tenantId: r.tenant_id, id: r.id },
        previousId: r.previous_id,
        vector: vectorAt(vectors, i),
      })),
    );
    done += rows.length;
    onProgress(done);
    const last = rows[rows.length - 1];
    if (last?.session_id) after = { tenantId: last.tenant_id, sessionId: last.session_id, seq: Number(last.seq) };
  }
}
