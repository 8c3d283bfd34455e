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
 * Index entries a filtered HNSW walk visits at most (hnsw.max_scan_tuples): enough to fill the top
 * k for a filter that lets through a few percent of the part, few enough to keep the walk's cost
 * bounded when it lets through almost nothing. pgvector applies it loosely: on a graph that also
 * holds other tenants' entries, 2,000 read up to 7,387 memory rows, 500 about 1,450.
 */
export const FILTERED_SCAN_TUPLES = 500;

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
  const walked = await q.db
    .transaction()
    .execute((trx) => vectorNeighbours({ ...q, db: trx, plan: 'hnsw', maxScanTuples: FILTERED_SCAN_TUPLES }));
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
  q: NearestInput & { plan?: VectorPlan; maxScanTuples?: number },
): Promise<{ id: string; distance: number }[]> {
  const plan = q.plan ?? 'planner';
  if (plan === 'exact') return exactNearestQuery(q).execute();
  await enableIterativeScan(q.db, plan === 'hnsw', q.maxScanTuples);
  const rows = await nearestQuery(q).execute();
  if (plan === 'hnsw') await restoreSorting(q.db);
  // relaxed_order lets an iterative HNSW scan return rows slightly out of distance order.
  return rows.sort((a, b) => a.distance - b.distance);
}
