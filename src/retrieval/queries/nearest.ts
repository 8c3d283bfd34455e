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
 * How the vector side runs: `exact` scans the scope, `hnsw` walks the HNSW index with the scope as
 * a filter, `planner` leaves the choice to the planner's statistics.
 */
export type VectorPlan = 'exact' | 'hnsw' | 'planner';

/**
 * Nearest neighbours by cosine distance within the scope, nearest first. With iterative scans on, a
 * filtered HNSW scan keeps going until it has `depth` rows that pass the filter (or the scope is exhausted).
 */
export async function vectorNeighbours(
  q: NearestInput & { plan?: VectorPlan },
): Promise<{ id: string; distance: number }[]> {
  const plan = q.plan ?? 'planner';
  if (plan === 'exact') return exactNearestQuery(q).execute();
  await enableIterativeScan(q.db, plan === 'hnsw');
  const rows = await nearestQuery(q).execute();
  if (plan === 'hnsw') await restoreSorting(q.db);
  // relaxed_order lets an iterative HNSW scan return rows slightly out of distance order.
  return rows.sort((a, b) => a.distance - b.distance);
}
