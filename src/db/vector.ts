import { sql, type RawBuilder } from 'kysely';
import { setLocal } from './citus.js';
import type { Db } from './connect.js';

/** Every raw pgvector fragment lives here, behind named, typed helpers. */

export interface EmbedderIdentity {
  id: string;
  dimensions: number;
}

const literals = new WeakMap<Float32Array, string>();

/**
 * pgvector's text form; numbers print with enough digits to round-trip a float32. Kept per vector:
 * a recall sends its query vector in each of its statements, and printing 512 floats is not free.
 */
export function toVectorLiteral(v: Float32Array): string {
  let literal = literals.get(v);
  if (literal === undefined) literals.set(v, (literal = `[${Array.from(v).join(',')}]`));
  return literal;
}

function checkDimensions(dimensions: number): number {
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 16000) {
    throw new Error(`invalid vector dimension ${dimensions}`);
  }
  return dimensions;
}

/**
 * The stored column is an untyped vector so that the dimension follows the embedder; the HNSW
 * index is on the typed cast, and queries must use the same expression to reach it. Queries name
 * the memories table `m`.
 */
export function embeddingColumn(
  dimensions: number,
  column: 'embedding' | 'window_embedding' = 'embedding',
): RawBuilder<unknown> {
  const d = checkDimensions(dimensions);
  return sql`(${sql.ref(`m.${column}`)}::vector(${sql.lit(d)}))`;
}

/**
 * A query vector as a typed SQL value. Turning the text form into a vector costs about 2 ms for 512
 * dimensions on the embedded database, so a statement that needs it more than once computes it
 * once (in a CTE) and refers to that.
 */
export function queryVector(dimensions: number, query: Float32Array): RawBuilder<string> {
  const d = checkDimensions(dimensions);
  return sql<string>`${toVectorLiteral(query)}::vector(${sql.lit(d)})`;
}

/** Cosine distance (0 = same direction, 2 = opposite) between stored embeddings and a vector-valued expression. */
export function cosineDistanceTo(dimensions: number, vector: RawBuilder<string>): RawBuilder<number> {
  return sql<number>`(${embeddingColumn(dimensions)} <=> ${vector})`;
}

/**
 * A memory's distance to a vector-valued expression for ranking: its own embedding's, blended with
 * its window vector's (migration 0008) by `windowShare`, where it has one. Needs the memory as `m`.
 */
export function contextDistanceTo(
  dimensions: number,
  vector: RawBuilder<string>,
  windowShare: number,
): RawBuilder<number> {
  const own = cosineDistanceTo(dimensions, vector);
  if (!(windowShare > 0)) return own;
  const share = sql.lit(Math.min(1, windowShare));
  const window = sql`(${embeddingColumn(dimensions, 'window_embedding')} <=> ${vector})`;
  return sql<number>`((1 - ${share}) * ${own} + ${share} * coalesce(${window}, ${own}))`;
}

/** Cosine distance (0 = same direction, 2 = opposite) between stored embeddings and a query. */
export function cosineDistance(dimensions: number, query: Float32Array): RawBuilder<number> {
  return cosineDistanceTo(dimensions, queryVector(dimensions, query));
}

export function vectorParam(v: Float32Array): RawBuilder<string> {
  return sql<string>`${toVectorLiteral(v)}::vector`;
}

/** pgvector's refusal to cast a stored vector of another size to the index's. */
const OTHER_DIMENSION = /^expected \d+ dimensions, not \d+$/;
/** How long an index build waits, in all, for old snapshots to let go of the previous size's rows. */
const INDEX_BUILD_ATTEMPTS = 60;
const INDEX_BUILD_RETRY_MS = 1000;

/**
 * Creates the HNSW index of one vector size, inside the caller's transaction. Right after
 * `reembed`, the rows' previous versions (vectors of the old size) are dead but still indexed by
 * CREATE INDEX while any other transaction's snapshot may see them (an autovacuum ANALYZE of the
 * rewritten table is enough), and casting one fails the build. Those snapshots end on their own, so
 * the build is retried from a savepoint until they have; a transaction held open for longer is
 * named in the error.
 */
export async function ensureVectorIndex(db: Db, dimensions: number, retryMs = INDEX_BUILD_RETRY_MS): Promise<void> {
  const d = checkDimensions(dimensions);
  const create = sql.raw(
    `CREATE INDEX IF NOT EXISTS memories_embedding_hnsw_${d} ON memories ` +
      `USING hnsw ((embedding::vector(${d})) vector_cosine_ops)`,
  );
  for (let attempt = 1; ; attempt++) {
    await sql`SAVEPOINT vector_index`.execute(db);
    try {
      await create.execute(db);
      await sql`RELEASE SAVEPOINT vector_index`.execute(db);
      return;
    } catch (error) {
      await sql`ROLLBACK TO SAVEPOINT vector_index`.execute(db);
      const message = error instanceof Error ? error.message : '';
      if (!OTHER_DIMENSION.test(message)) throw error;
      if (attempt >= INDEX_BUILD_ATTEMPTS) {
        throw new Error(
          `the vector index for ${d} dimensions cannot be built while another transaction still sees ` +
            `vectors of the previous size; end long-running transactions on this database and start again`,
          { cause: error },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, retryMs));
    }
  }
}

/** The dimensions of the HNSW indexes that exist (one per embedder size the deployment has used). */
export async function vectorIndexDimensions(db: Db): Promise<number[]> {
  const rows = await sql<{ indexname: string }>`
    SELECT indexname FROM pg_indexes
    WHERE tablename = 'memories' AND indexname LIKE 'memories_embedding_hnsw_%'`.execute(db);
  return rows.rows.map((r) => Number(r.indexname.slice('memories_embedding_hnsw_'.length))).filter(Number.isInteger);
}

/**
 * Drops the HNSW index of one vector size. Before vectors of another size are written: the index
 * casts every stored vector to its own size, and a row of another size would fail that cast.
 */
export async function dropVectorIndex(db: Db, dimensions: number): Promise<void> {
  const d = checkDimensions(dimensions);
  await sql.raw(`DROP INDEX IF EXISTS memories_embedding_hnsw_${d}`).execute(db);
}

/**
 * Filtered HNSW scans stop early and return too few rows; iterative scans (pgvector >= 0.8) keep
 * scanning until the filter is satisfied. Must run inside the transaction of the vector query.
 * With `forceIndex`, sorting is taken away too, so that the planner, whatever its statistics say
 * (the embedded database never refreshes them), serves the ordered query from HNSW rather than
 * reading the whole scope and sorting it; restoreSorting undoes that after the query.
 */
export async function enableIterativeScan(
  trx: Db,
  forceIndex = false,
  maxScanTuples?: number,
  efSearch = 400,
): Promise<void> {
  // Measured on 2,000 scoped vectors: ef_search 100 found ~98% of the exact top 20, 400 found all.
  // setLocal (src/db/citus.ts) sends them in one round trip, and on Citus so that the workers get them.
  await setLocal(trx, {
    'hnsw.iterative_scan': 'relaxed_order',
    'hnsw.ef_search': String(efSearch),
    ...(forceIndex ? { enable_sort: 'off' } : {}),
    // How many index entries an iterative scan visits at most before it gives up (pgvector's default: 20,000).
    ...(maxScanTuples !== undefined ? { 'hnsw.max_scan_tuples': String(Math.max(1, Math.floor(maxScanTuples))) } : {}),
  });
}

export async function restoreSorting(trx: Db): Promise<void> {
  await setLocal(trx, { enable_sort: 'on' });
}
