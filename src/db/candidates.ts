import { sql, type Expression, type RawBuilder } from 'kysely';
import type { Binding } from '../config.js';
import { bm25Idf, bm25LengthNorm, queryTerms, type Bm25Parameters } from './fulltext.js';
import { cosineDistanceTo, queryVector } from './vector.js';

/**
 * The lexical side of recall and the session context of every candidate, in one statement: a round
 * trip to the embedded database costs more than most of the work, and the BM25 statistics, the
 * neighbours and the distances all come from one pass over the scope.
 */

export interface CandidateQuery {
  /** The memories the caller may see, as `memories m` selecting `id`, `session_id`, `seq`, `search`. */
  scope: Expression<{ id: string; session_id: string | null; seq: number; search: string }>;
  tenantId: string;
  text: string;
  embedding: Float32Array;
  dimensions: number;
  /** Candidates of the vector side; they and their session neighbours are returned too. */
  nearestIds: readonly string[];
  /** How many memories the lexical side brings, best contextual BM25 first. */
  lexicalDepth: number;
  /** Share of the previous memory's BM25 that counts toward a memory's (FUSION.previousLexicalShare). */
  previousLexicalShare: number;
  bm25: Bm25Parameters;
  /** How much of each candidate's content to return (enough for a speaker's label). */
  headChars: number;
}

export interface CandidateRow {
  id: string;
  /** A candidate; the other rows are session neighbours of candidates, returned for their distances. */
  candidate: boolean;
  /** BM25 against the query; 0 when no term matched. */
  lexical: number;
  /** BM25 of the memory stored just before it in its session; 0 when none. */
  previous_lexical: number;
  /** Its neighbours in its session, within the scope, in store order; null for none. */
  prev_id: string | null;
  next_id: string | null;
  distance: number;
  binding: Binding;
  confidence: number;
  decay_rate: number;
  last_reinforced_at: Date;
  metadata_speaker: string | null;
  head: string;
}

/**
 * Okapi BM25 of the query against every memory of the scope, with the scope's own statistics
 * (memory count, average length, document frequencies) computed at query time: a term every memory
 * holds (a speaker's name, "customer") counts for little and a rare one for much, which ts_rank_cd,
 * knowing nothing of the other memories, cannot do. Each memory also gets the BM25 of the memory
 * stored just before it in its session, and the ids of its two session neighbours.
 *
 * Candidates: the `lexicalDepth` memories with the best BM25 plus a share of the previous one's,
 * the vector candidates, and the session neighbours of the vector candidates. Returned: each
 * candidate and each session neighbour of a candidate, with its distance to the query and what
 * fusion needs. The statistics scan the whole scope, which a subject's or a session's memories keep
 * small.
 *
 * The statement is written so that its plan cannot depend on table statistics, which the embedded
 * database never refreshes after start: no join between intermediate results, only correlated
 * subqueries, hashed IN lists, one window and primary-key lookups. (With joins, a subject stored
 * after the last ANALYZE made the planner re-aggregate BM25 once per memory: 0.5 s instead of 20 ms.)
 */
export function recallCandidates(q: CandidateQuery): RawBuilder<CandidateRow> {
  if (!Number.isInteger(q.lexicalDepth) || q.lexicalDepth < 1) throw new Error('invalid lexical depth');
  if (!Number.isInteger(q.headChars) || q.headChars < 1) throw new Error('invalid head length');
  const share = sql.lit(q.previousLexicalShare);
  // The vector candidates once, as rows; an empty list still needs a typed, empty relation.
  const nearest =
    q.nearestIds.length > 0
      ? sql`SELECT x.id FROM (VALUES ${sql.join(q.nearestIds.map((id) => sql`(${id}::uuid)`))}) AS x(id)`
      : sql`SELECT NULL::uuid AS id WHERE false`;
  const idf = bm25Idf(sql`coalesce(df.df, 0)`, sql`stats.n`);
  const norm = bm25LengthNorm(sql`docs.len`, sql`(SELECT avg_len FROM stats)`, q.bm25);
  return sql<CandidateRow>`
    WITH nearest AS MATERIALIZED (${nearest}),
    terms AS MATERIALIZED (
      SELECT (row_number() OVER ())::int AS k, t.q FROM ${queryTerms(q.text)} AS t
    ),
    docs AS MATERIALIZED (
      SELECT s.id, s.session_id, s.seq, length(s.search) AS len,
        ARRAY(SELECT terms.k FROM terms WHERE s.search @@ terms.q) AS held
      FROM (${q.scope}) AS s
    ),
    stats AS MATERIALIZED (
      SELECT count(*)::float8 AS n, greatest(coalesce(avg(docs.len), 1), 1)::float8 AS avg_len FROM docs
    ),
    df AS MATERIALIZED (
      SELECT u.k, count(*)::float8 AS df FROM docs CROSS JOIN LATERAL unnest(docs.held) AS u(k) GROUP BY u.k
    ),
    -- The idf of term k is idf[k]; a term that no memory holds is never looked up.
    weights AS MATERIALIZED (
      SELECT coalesce(array_agg(${idf}::float8 ORDER BY terms.k), '{}') AS idf
      FROM terms LEFT JOIN df ON df.k = terms.k CROSS JOIN stats
    ),
    scored AS MATERIALIZED (
      SELECT docs.id, docs.session_id, docs.seq,
        (coalesce(sum((SELECT idf FROM weights)[u.k]), 0) * ${norm})::float8 AS lexical
      FROM docs LEFT JOIN LATERAL unnest(docs.held) AS u(k) ON true
      GROUP BY docs.id, docs.session_id, docs.seq, docs.len
    ),
    ordered AS MATERIALIZED (
      SELECT scored.id, scored.lexical,
        coalesce(lag(scored.lexical) OVER w, 0)::float8 AS previous_lexical,
        lag(scored.id) OVER w AS prev_id,
        lead(scored.id) OVER w AS next_id
      FROM scored
      -- A memory without a session is a partition of its own: it has no neighbours.
      WINDOW w AS (PARTITION BY coalesce(scored.session_id, scored.id) ORDER BY scored.seq)
    ),
    lexical_best AS MATERIALIZED (
      SELECT o.id FROM ordered AS o
      WHERE o.lexical + ${share} * o.previous_lexical > 0
      ORDER BY o.lexical + ${share} * o.previous_lexical DESC, o.id
      LIMIT ${sql.lit(q.lexicalDepth)}
    ),
    flagged AS MATERIALIZED (
      SELECT o.*,
        (o.id IN (SELECT id FROM lexical_best) OR o.id IN (SELECT id FROM nearest)
          OR o.prev_id IN (SELECT id FROM nearest) OR o.next_id IN (SELECT id FROM nearest)) AS candidate
      FROM ordered AS o
    ),
    needed AS MATERIALIZED (
      SELECT f.* FROM flagged AS f
      WHERE f.candidate
        OR f.id IN (SELECT prev_id FROM flagged WHERE candidate AND prev_id IS NOT NULL)
        OR f.id IN (SELECT next_id FROM flagged WHERE candidate AND next_id IS NOT NULL)
    ),
    query_vector AS MATERIALIZED (
      SELECT ${queryVector(q.dimensions, q.embedding)} AS v
    )
    SELECT n.id, n.candidate, n.lexical, n.previous_lexical, n.prev_id, n.next_id, r.*
    FROM needed AS n
    CROSS JOIN LATERAL (
      SELECT ${cosineDistanceTo(q.dimensions, sql`(SELECT v FROM query_vector)`)}::float8 AS distance,
        m.binding, m.confidence, m.decay_rate, m.last_reinforced_at,
        m.metadata->>'speaker' AS metadata_speaker,
        left(m.content, ${sql.lit(q.headChars)}) AS head
      FROM memories AS m
      WHERE m.tenant_id = ${q.tenantId} AND m.id = n.id
    ) AS r`;
}
