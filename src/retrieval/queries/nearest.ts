import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import {
  contextDistanceTo,
  cosineDistance,
  enableIterativeScan,
  queryVector,
  restoreSorting,
} from '../../db/vector.js';
import { FUSION } from '../fusion.js';
import { scopeFilter, type Part, type RecallScope } from './scope.js';

/** The vector side of one part of a scope: its `depth` memories nearest the query's embedding. */
export interface NearestInput {
  db: Db;
  dimensions: number;
  scope: RecallScope;
  part: Part;
  embedding: Float32Array;
  depth: number;
}

/**
 * The vector side's SQL: ordered by cosine distance, so HNSW can serve it. The index holds the
 * memories' own vectors, so this finds by those alone; the candidate statement then ranks what it
 * found with the window vectors too.
 */
export function nearestQuery(q: NearestInput) {
  return (
    q.db
      .selectFrom('memories as m')
      .select(['m.id', cosineDistance(q.dimensions, q.embedding).as('distance')])
      .where((eb) => scopeFilter(eb, q.scope, q.part))
      // By the output column, so the query vector is sent and parsed once (HNSW still serves it).
      .orderBy('distance')
      .limit(q.depth)
  );
}

/**
 * The vector side by an exact scan of the scope: the distances are computed in a materialized CTE,
 * which no index can order, so the scope's own indexes find its memories.
 */
export function exactNearestQuery(q: NearestInput) {
  // The window vectors rank here as in the candidate statements (FUSION.windowSemanticShare), so an
  // exact scan brings the same candidates as the one-pass statement; the query vector is parsed once.
  const distance = contextDistanceTo(q.dimensions, sql`(SELECT v FROM query_vector)`, FUSION.windowSemanticShare);
  return q.db
    .with('query_vector', (db) => db.selectNoFrom(queryVector(q.dimensions, q.embedding).as('v')))
    .with(
      (cte) => cte('scoped').materialized(),
      (db) =>
        db
          .selectFrom('memories as m')
          .select(['m.id', distance.as('distance')])
          .where((eb) => scopeFilter(eb, q.scope, q.part)),
    )
    .selectFrom('scoped')
    .select(['scoped.id', 'scoped.distance'])
    .orderBy('scoped.distance')
    .orderBy('scoped.id')
    .limit(q.depth);
}

/**
 * The exact side of a filtered vector search (filteredNeighbours): the memories of the part that pass
 * the filter, nearest first, read by the scope's and the filter's indexes and at most
 * `exactScanMax` + 1 of them, with how many were read (`passed`): at most `exactScanMax`, they are
 * all the part's passing memories and the answer is exact.
 */
export function boundedExactNearestQuery(q: NearestInput, exactScanMax: number) {
  if (!Number.isInteger(exactScanMax) || exactScanMax < 0) throw new Error('invalid exact scan bound');
  const distance = contextDistanceTo(q.dimensions, sql`(SELECT v FROM query_vector)`, FUSION.windowSemanticShare);
  return q.db
    .with('query_vector', (db) => db.selectNoFrom(queryVector(q.dimensions, q.embedding).as('v')))
    .with(
      (cte) => cte('scoped').materialized(),
      (db) =>
        db
          .selectFrom('memories as m')
          .select(['m.id', distance.as('distance')])
          .where((eb) => scopeFilter(eb, q.scope, q.part))
          .limit(exactScanMax + 1),
    )
    .selectFrom('scoped')
    .select(['scoped.id', 'scoped.distance', sql<number>`(SELECT count(*) FROM scoped)::int`.as('passed')])
    .orderBy('scoped.distance')
    .orderBy('scoped.id')
    .limit(q.depth);
}

/**
 * Index entries a filtered HNSW walk visits at most (hnsw.max_scan_tuples), and its candidate list
 * (hnsw.ef_search, the unfiltered walk's is 400). pgvector stops visiting at max_scan_tuples but
 * then still returns every candidate it had set aside, each a memory row read and filtered, so the
 * rows a selective filter reads grow with both, and not in proportion: in test/retrieval/bounded
 * (a 20,000-memory subject, 5 passing the filter) 500 tuples with ef_search 400 read 4,000 to 8,000
 * rows, 500 with 40 read 2,300 to 4,100, and 200 with 40 read 1,500 to 2,300. A filter letting a few
 * percent through still fills the top k from 200 entries; what a more selective one leaves short,
 * the bounded exact scan behind the walk finds.
 */
export const FILTERED_SCAN_TUPLES = 200;
export const FILTERED_EF_SEARCH = 40; // see FILTERED_SCAN_TUPLES

/**
 * The vector side of a part too large for an exact scan, under a caller's filter. A filtered HNSW
 * walk stops after FILTERED_SCAN_TUPLES entries however few of them passed, so a selective filter
 * leaves it short of `depth`; then the memories that pass are few, and an exact scan of them
 * (boundedExactNearestQuery), found by the filter's index, is complete. A filter between the two
 * (more pass than `exactScanMax`, too few for the walk) gets the best of both reads, nearest first.
 */
export async function filteredNeighbours(
  q: NearestInput,
  exactScanMax: number,
): Promise<{ id: string; distance: number }[]> {
  const walked = await q.db.transaction().execute((trx) =>
    vectorNeighbours({
      ...q,
      db: trx,
      plan: 'hnsw',
      maxScanTuples: FILTERED_SCAN_TUPLES,
      efSearch: FILTERED_EF_SEARCH,
    }),
  );
  if (walked.length >= q.depth) return walked;
  const scanned = await boundedExactNearestQuery(q, exactScanMax).execute();
  const rows = scanned.map(({ id, distance }) => ({ id, distance }));
  if ((scanned[0]?.passed ?? 0) <= exactScanMax) return rows;
  const seen = new Set(rows.map((r) => r.id));
  return [...rows, ...walked.filter((r) => !seen.has(r.id))].sort((a, b) => a.distance - b.distance).slice(0, q.depth);
}

/**
 * How the vector side runs: `exact` scans the scope, `hnsw` walks the HNSW index with the scope as
 * a filter, `planner` leaves the choice to the planner's statistics.
 */
export type VectorPlan = 'exact' | 'hnsw' | 'planner';

/**
 * Nearest neighbours by cosine distance within the scope, nearest first. With iterative scans on, a
 * filtered HNSW scan keeps going until it has `depth` rows that pass the filter (or the scope is exhausted).
 */
export async function vectorNeighbours(
  q: NearestInput & { plan?: VectorPlan; maxScanTuples?: number; efSearch?: number },
): Promise<{ id: string; distance: number }[]> {
  const plan = q.plan ?? 'planner';
  if (plan === 'exact') return exactNearestQuery(q).execute();
  await enableIterativeScan(q.db, plan === 'hnsw', q.maxScanTuples, q.efSearch);
  const rows = await nearestQuery(q).execute();
  if (plan === 'hnsw') await restoreSorting(q.db);
  // relaxed_order lets an iterative HNSW scan return rows slightly out of distance order.
  return rows.sort((a, b) => a.distance - b.distance);
}
