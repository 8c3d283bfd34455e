import { sql, type RawBuilder } from 'kysely';
import {
  bm25Weights,
  MEMORY_FIELD_NAMES,
  memorySelections,
  sessionLexicalOf,
  type CandidateQuery,
  type CandidateRow,
} from './candidates.js';
import { contextDistanceTo, queryVector } from './vector.js';

/**
 * Recall's candidates for a small scope, in one pass over it: what src/db/candidates.ts finds with
 * index lookups per candidate (session neighbours, BM25 of each and of its predecessor), this reads
 * off the scope's rows at once, with window functions for the neighbours. For a few hundred
 * memories one pass costs less than the lookups did, and its plan holds whatever the values, so
 * the statement is prepared (src/db/prepared.ts).
 *
 * Same candidates as the lookup statement, but for one thing: every memory's BM25 is exact, so
 * lexicalBudget (which only bounds the lookups) does not apply. The pass reads each row once, with
 * what fusion needs of it, and matches each query term against each memory once (for the memory's
 * BM25 and its session's alike): looking the returned rows up again and matching the terms twice
 * were a third of the statement's time on a typical subject.
 */
export interface ScanCandidateQuery extends Omit<CandidateQuery, 'nearest' | 'lexicalBudget'> {
  /** How many memories the vector side brings, nearest first. */
  vectorDepth: number;
}

export function scanCandidates(q: ScanCandidateQuery): RawBuilder<CandidateRow> {
  const share = sql.lit(q.previousLexicalShare);
  const { weights, lengthNorm, conceptShare } = bm25Weights(q);
  const scope = q.scope().select(['m.id', 'm.seq', 'm.search']).select(memorySelections(q));
  // Memories outside any session have no neighbours (a window over their NULL session would make some).
  const inSession = (expr: RawBuilder<unknown>) => sql`CASE WHEN s.session_id IS NULL THEN NULL ELSE ${expr} END`;
  const contextual = sql`c.lexical + ${share} * c.previous_lexical`;
  return sql<CandidateRow>`
    WITH query_vector AS MATERIALIZED (SELECT ${queryVector(q.dimensions, q.embedding)} AS v),
    scoped AS MATERIALIZED (
      ${scope.select(contextDistanceTo(q.dimensions, sql`(SELECT v FROM query_vector)`, q.windowShare).as('distance'))}
    ),
    ${weights},
    -- Each query term a memory holds, and whether in its own words.
    hits AS MATERIALIZED (
      SELECT s.id, s.session_id, t.k, s.search @@ t.own AS own FROM scoped AS s, terms AS t WHERE s.search @@ t.q
    ),
    -- A memory's BM25 before length normalization: a term held only among its concepts counts at conceptShare.
    held AS MATERIALIZED (
      SELECT h.id, sum(w.idf[h.k] * CASE WHEN h.own THEN 1 ELSE ${conceptShare} END) AS idf
      FROM hits AS h, weights AS w GROUP BY h.id
    ),
    scored AS MATERIALIZED (
      SELECT s.id, s.session_id, s.distance, (coalesce(l.idf, 0) * ${lengthNorm(sql`s.lexemes`)})::float8 AS lexical,
        ${inSession(sql`lag(s.id) OVER w`)}::uuid AS prev_id,
        ${inSession(sql`lead(s.id) OVER w`)}::uuid AS next_id
      FROM scoped AS s LEFT JOIN held AS l ON l.id = s.id
      WINDOW w AS (PARTITION BY s.session_id ORDER BY s.seq)
    ),
    ${sessionLexicalOf(sql`SELECT DISTINCT h.session_id, h.k FROM hits AS h WHERE h.own AND h.session_id IS NOT NULL`)},
    context AS MATERIALIZED (
      SELECT c.id, c.distance, c.lexical, coalesce(p.lexical, 0)::float8 AS previous_lexical,
        coalesce(sl.lexical, 0)::float8 AS session_lexical, c.prev_id, c.next_id
      FROM scored AS c LEFT JOIN scored AS p ON p.id = c.prev_id
        LEFT JOIN session_lexical AS sl ON sl.session_id = c.session_id
    ),
    nearest AS MATERIALIZED (
      SELECT c.id FROM context AS c ORDER BY c.distance, c.id LIMIT ${q.vectorDepth}::int
    ),
    lexical_best AS MATERIALIZED (
      SELECT c.id FROM context AS c WHERE ${contextual} > 0
      ORDER BY ${contextual} DESC, c.id LIMIT ${q.lexicalDepth}::int
    ),
    -- The session neighbours of the vector candidates are candidates too.
    candidates AS MATERIALIZED (
      SELECT id FROM nearest
      UNION SELECT id FROM lexical_best
      UNION SELECT c.prev_id FROM context AS c WHERE c.prev_id IS NOT NULL AND c.id IN (SELECT id FROM nearest)
      UNION SELECT c.next_id FROM context AS c WHERE c.next_id IS NOT NULL AND c.id IN (SELECT id FROM nearest)
    ),
    needed AS MATERIALIZED (
      SELECT c.id, true AS candidate, c.lexical, c.previous_lexical, c.session_lexical, c.prev_id, c.next_id,
        c.distance
      FROM context AS c WHERE c.id IN (SELECT id FROM candidates)
      UNION ALL
      SELECT c.id, false, 0::float8, 0::float8, 0::float8, NULL::uuid, NULL::uuid, c.distance
      FROM context AS c
      WHERE c.id NOT IN (SELECT id FROM candidates) AND c.id IN (
        SELECT x.prev_id FROM context AS x WHERE x.id IN (SELECT id FROM candidates)
        UNION SELECT x.next_id FROM context AS x WHERE x.id IN (SELECT id FROM candidates)
      )
    )
    SELECT n.id, n.candidate, n.lexical, n.previous_lexical, n.session_lexical, n.prev_id, n.next_id, n.distance,
      ${sql.join(MEMORY_FIELD_NAMES.map((name) => sql.ref(`s.${name}`)))}
    FROM needed AS n JOIN scoped AS s ON s.id = n.id`;
}
