import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { bm25Idf, bm25LengthNorm, ownWords, queryTerms, termLexemes, type Bm25Parameters } from '../../db/fulltext.js';
import { wordGroups } from '../../text/word-groups.js';
import type { Database } from '../../db/schema.js';
import type { ScopeUnit, ScopeStats } from '../../db/scope-stats.js';
import { unitKeys } from '../../db/scope-stats.js';
import { contextDistanceTo, queryVector } from '../../db/vector.js';
import type { Db } from '../../db/connect.js';
import { FUSION } from '../fusion.js';
import { SPEAKER_HEAD_CHARS } from '../../text/speakers.js';
import { TIME_CUE_CHARS } from '../time-cue.js';
import { scopeFilter, scopeUnits, type Part, type RecallScope } from './scope.js';
import type { Binding } from '../../vocabulary.js';

/**
 * The lexical side of recall and the session context of every candidate, in one statement: a round
 * trip to the embedded database costs more than most of the work.
 */

type ScopeDb = Database & { m: Database['memories'] };

export interface CandidateQuery {
  /** `memories m` restricted to what the caller may see; the statement adds its own conditions. */
  scope: () => SelectQueryBuilder<ScopeDb, 'm', object>;
  tenantId: string;
  /** The units the scope is made of, whose maintained statistics stand for the scope's. */
  units: readonly ScopeUnit[];
  stats: ScopeStats;
  text: string;
  embedding: Float32Array;
  dimensions: number;
  /** Candidates of the vector side; they and their session neighbours are returned too. */
  nearest: readonly string[];
  /** How many memories the lexical side brings, best contextual BM25 first. */
  lexicalDepth: number;
  /**
   * How many memories the lexical side may read: query terms are fetched rarest first while their
   * summed document frequencies stay within it, so a recall reads a bounded number of memories
   * whatever the scope's size. A term too common to fetch still scores every candidate that holds it.
   */
  lexicalBudget: number;
  /** Share of the previous memory's BM25 that counts toward a memory's (FUSION.previousLexicalShare). */
  previousLexicalShare: number;
  /** Share of its idf that a query term held only among a memory's concepts counts for (FUSION.conceptShare). */
  conceptShare: number;
  /** Share of a memory's distance that its window vector's makes (FUSION.windowSemanticShare). */
  windowShare: number;
  bm25: Bm25Parameters;
  /** How much of each candidate's content to return (enough for a speaker's label and the time cue). */
  headChars: number;
}

export interface CandidateRow {
  id: string;
  /** A candidate; the other rows are session neighbours of candidates, returned for their distances. */
  candidate: boolean;
  /** BM25 against the query; 0 when no term matched (and for rows that are not candidates). */
  lexical: number;
  /** BM25 of the memory stored just before it in its session; 0 when none. */
  previous_lexical: number;
  /**
   * BM25 of its session as one document: the idf of every query term that some memory of the
   * session holds, with no length normalization; 0 outside a session (and for rows that are not
   * candidates). Over the memories the lexical side reads: exact for a scanned scope, and for a
   * large scope only the terms rare enough to fetch (lexicalBudget) count.
   */
  session_lexical: number;
  /** Its neighbours in its session, within the scope, in store order; null for none. */
  prev_id: string | null;
  next_id: string | null;
  distance: number;
  binding: Binding;
  session_id: string | null;
  confidence: number;
  /** Its decay rate; 0 for a pinned memory, which does not decay. */
  decay_rate: number;
  /**
   * When it was last reinforced, in milliseconds since the epoch: a number parses several times faster
   * than a timestamp, which a 1,000-memory part read whole would parse for every row.
   */
  last_reinforced_ms: number;
  /**
   * The moment recency counts from, in milliseconds since the epoch: when what it says happened
   * (occurred_at), or its last reinforcement when one came after it was stored, since a reinforcement
   * is a new mention.
   */
  recent_ms: number;
  metadata_speaker: string | null;
  head: string;
  /** Distinct lexemes of its text (the length of its tsvector). */
  lexemes: number;
}

const positive = (n: number, what: string): number => {
  if (!Number.isInteger(n) || n < 1) throw new Error(`invalid ${what}`);
  return n;
};

/**
 * The query's terms as the CTE `terms`: k (1, 2, … : the term's index in every per-term array), q
 * (its tsquery), alternatives, own (q restricted to a memory's own words), lexemes.
 */
export function termsCte(text: string) {
  return sql`terms AS MATERIALIZED (
      SELECT (row_number() OVER ())::int AS k, t.q, t.alternatives, ${ownWords(sql`t.term`)} AS own,
        ${termLexemes(sql`t.term`)} AS lexemes
      FROM ${queryTerms(text, wordGroups(text))} AS t
    )`;
}

/**
 * The document frequency of the `terms` row `terms` among the units whose keys `keys` (a text[])
 * gives, from their counters. A phrase's frequency is taken as its rarest word's, a group of forms'
 * as the sum of theirs: upper bounds, close enough for BM25. Each counter by its whole key (LATERAL …
 * LIMIT 1), so that no plan reads other units' counters.
 */
export function termFrequency(tenantId: string, keys: RawBuilder<unknown>) {
  return sql<number>`coalesce((
        SELECT CASE WHEN terms.alternatives THEN sum(d.df) ELSE min(d.df) END FROM (
          SELECT coalesce((
            SELECT sum(s.df) FROM unnest(${keys}::text[]) AS uk(unit)
            CROSS JOIN LATERAL (
              SELECT x.df FROM memory_term_stats AS x
              WHERE x.tenant_id = ${tenantId} AND x.unit = uk.unit AND x.lexeme = l.lexeme LIMIT 1
            ) AS s), 0) AS df
          FROM unnest(terms.lexemes) AS l(lexeme)) AS d), 0)::float8`;
}

/**
 * The query's BM25 weights as CTEs (`units`, `terms`, `tdf`: each term's document frequency in the
 * scope, `weights`: their idf), and the BM25 of a memory row from them.
 */
function bm25Weights(q: Pick<CandidateQuery, 'tenantId' | 'units' | 'stats' | 'text' | 'bm25' | 'conceptShare'>) {
  const n = sql<number>`${Math.max(0, q.stats.docs)}::float8`;
  const avgLen = sql<number>`${Math.max(1, q.stats.docs > 0 ? q.stats.totalLen / q.stats.docs : 1)}::float8`;
  const idf = bm25Idf(sql`tdf.df`, n);
  const weights = sql`units AS MATERIALIZED (SELECT ${unitKeys(q.units)} AS keys),
    ${termsCte(q.text)},
    -- Each term's document frequency in the scope.
    tdf AS MATERIALIZED (
      SELECT terms.k, terms.q, ${termFrequency(q.tenantId, sql`(SELECT u.keys FROM units AS u)`)} AS df FROM terms
    ),
    -- The idf of term k is idf[k].
    weights AS MATERIALIZED (
      SELECT coalesce(array_agg(${idf}::float8 ORDER BY tdf.k), '{}') AS idf FROM tdf
    )`;
  const conceptShare = sql.lit(q.conceptShare);
  // BM25 of the memory row `alias`, from the weights of every query term it holds: in full when in
  // its own words, at conceptShare when only among its concepts.
  const lexicalOf = (alias: string) => {
    const search = sql.ref(`${alias}.search`);
    const norm = bm25LengthNorm(sql`length(${search})`, avgLen, q.bm25);
    const held = sql`CASE WHEN ${search} @@ t.own THEN 1 ELSE ${conceptShare} END`;
    return sql<number>`(coalesce((SELECT sum(w.idf[t.k] * ${held}) FROM terms AS t, weights AS w WHERE ${search} @@ t.q), 0) * ${norm})::float8`;
  };
  return { weights, lexicalOf };
}

/**
 * The session BM25 of every session among the rows of `source` (a CTE with session_id and search):
 * the sum of the idf of the query terms some row of the session says in its own words (a session is
 * about what it says, not about the kinds of its nouns). Needs bm25Weights' CTEs.
 */
function sessionLexicalCte(source: string) {
  return sql`session_lexical AS MATERIALIZED (
      SELECT x.session_id, sum(w.idf[x.k])::float8 AS lexical
      FROM (
        SELECT DISTINCT s.session_id, t.k FROM ${sql.table(source)} AS s, terms AS t
        WHERE s.session_id IS NOT NULL AND s.search @@ t.own
      ) AS x, weights AS w
      GROUP BY x.session_id
    )`;
}

/**
 * What fusion reads of a memory row `m` besides its scores (CandidateRow), by output name: one list
 * for the lookup statement and the scope read (src/retrieval/queries/scope-read.ts), rendered as a select list
 * (memoryColumns) or as the selections of a query builder (memorySelections).
 */
function memoryFields(q: Pick<CandidateQuery, 'headChars'>) {
  return {
    binding: sql<Binding>`m.binding`,
    session_id: sql<string | null>`m.session_id`,
    confidence: sql<number>`m.confidence`,
    decay_rate: sql<number>`CASE WHEN m.pinned THEN 0 ELSE m.decay_rate END`,
    last_reinforced_ms: sql<number>`(extract(epoch FROM m.last_reinforced_at) * 1000)::float8`,
    recent_ms: sql<number>`(extract(epoch FROM CASE WHEN m.last_reinforced_at > m.created_at
      THEN greatest(m.occurred_at, m.last_reinforced_at) ELSE m.occurred_at END) * 1000)::float8`,
    metadata_speaker: sql<string | null>`m.metadata->>'speaker'`,
    head: sql<string>`left(m.content, ${sql.lit(q.headChars)})`,
    lexemes: sql<number>`length(m.search)::int`,
  };
}

/** The names memoryFields gives its columns. */
export const MEMORY_FIELD_NAMES = Object.keys(memoryFields({ headChars: 1 })) as (keyof ReturnType<
  typeof memoryFields
>)[];

function memoryColumns(q: Pick<CandidateQuery, 'headChars'>) {
  return sql.join(Object.entries(memoryFields(q)).map(([name, value]) => sql`${value} AS ${sql.id(name)}`));
}

export function memorySelections(q: Pick<CandidateQuery, 'headChars'>) {
  // Typed as unknown: the statements that read them type their rows as CandidateRow.
  return Object.entries(memoryFields(q)).map(([name, value]) => (value as RawBuilder<unknown>).as(name));
}

/**
 * Okapi BM25 of the query with the scope's statistics (memory count, average length, document
 * frequencies), read from the counters that migration 0006 keeps per unit: a term every memory holds
 * (a speaker's name, "customer") counts for little and a rare one for much, which ts_rank_cd,
 * knowing nothing of the other memories, cannot do.
 *
 * Lexical candidates come from the full-text index: the memories holding the rarest query terms, or
 * else two of the common ones (within lexicalBudget), and the memory stored after each of them in its session, which may take a
 * share of its BM25. For those only, BM25 and the previous memory's BM25 are computed exactly, over
 * every query term. Candidates: the `lexicalDepth` best of them, the vector candidates, and the
 * session neighbours of the vector candidates. Returned: each candidate and each session neighbour of
 * a candidate, with its distance to the query and what fusion needs. Nothing here reads the whole
 * scope: session neighbours are lookups in (tenant, session, seq) order.
 *
 * The statement is written so that its plan cannot depend on table statistics, which the embedded
 * database never refreshes after start: no join between intermediate results, only correlated
 * subqueries, hashed IN lists and primary-key or index lookups.
 */
export function recallCandidates(q: CandidateQuery): RawBuilder<CandidateRow> {
  positive(q.lexicalDepth, 'lexical depth');
  positive(q.lexicalBudget, 'lexical budget');
  positive(q.headChars, 'head length');
  const share = sql.lit(q.previousLexicalShare);
  const tenant = q.tenantId;
  const lexicalBudget = sql`${q.lexicalBudget}::int`;
  const docs = sql`${Math.max(1, q.stats.docs)}::float8`;
  const { weights, lexicalOf } = bm25Weights(q);
  // The memory of the scope stored just before (or after) the row `alias` in its session.
  const neighbour = (alias: string, side: 'prev' | 'next') =>
    q
      .scope()
      .select(['m.id', 'm.search'])
      .where(sql<boolean>`m.session_id = ${sql.ref(`${alias}.session_id`)}`)
      .where(
        side === 'prev'
          ? sql<boolean>`m.seq < ${sql.ref(`${alias}.seq`)}`
          : sql<boolean>`m.seq > ${sql.ref(`${alias}.seq`)}`,
      )
      .orderBy('m.seq', side === 'prev' ? 'desc' : 'asc')
      .limit(1);
  const byId = (alias: string) =>
    sql`(SELECT m.id, m.session_id, m.seq, m.search FROM memories AS m WHERE m.tenant_id = ${tenant} AND m.id = ${sql.ref(alias)})`;

  const nearest = sql`SELECT DISTINCT x.id FROM unnest(${q.nearest}::uuid[]) AS x(id)`;
  const picked = sql<boolean>`m.search @@ (SELECT picked.q FROM picked)`;
  const matched = q
    .scope()
    .select(['m.id', 'm.session_id', 'm.seq', 'm.search'])
    .where(picked)
    .limit(sql<number>`${lexicalBudget}`);

  return sql<CandidateRow>`
    WITH nearest AS MATERIALIZED (${nearest}),
    ${weights},
    -- Terms rarest first while their document frequencies fit the budget.
    rare AS MATERIALIZED (
      SELECT x.k, x.q, x.running FROM (
        SELECT tdf.k, tdf.q, sum(tdf.df) OVER (ORDER BY tdf.df, tdf.k) AS running FROM tdf WHERE tdf.df > 0
      ) AS x WHERE x.running <= ${lexicalBudget}
    ),
    -- Then pairs of the other terms, both in one memory, with what is left: in a large scope every
    -- term of a query may be too common to fetch alone, while the memories holding two of them,
    -- the best by BM25, are few. Their number is estimated as if the terms were independent.
    pairs AS MATERIALIZED (
      SELECT x.q FROM (
        SELECT a.q && b.q AS q,
          sum(a.df * b.df / ${docs}) OVER (ORDER BY a.df * b.df, a.k, b.k) AS running
        FROM tdf AS a JOIN tdf AS b ON a.k < b.k
        WHERE a.df > 0 AND b.df > 0 AND a.k NOT IN (SELECT k FROM rare) AND b.k NOT IN (SELECT k FROM rare)
      ) AS x WHERE x.running <= ${lexicalBudget} - coalesce((SELECT max(running) FROM rare), 0)
    ),
    picked AS MATERIALIZED (
      SELECT string_agg(c.q::text, ' | ')::tsquery AS q FROM (SELECT q FROM rare UNION ALL SELECT q FROM pairs) AS c
    ),
    matched AS MATERIALIZED (${matched}),
    ${sessionLexicalCte('matched')},
    -- A fetched memory's BM25 comes from the row in hand, its predecessor's from one lookup.
    matched_scored AS MATERIALIZED (
      SELECT x.id, x.session_id, x.seq, ${lexicalOf('x')} AS lexical,
        coalesce((SELECT ${lexicalOf('pv')} FROM (${neighbour('x', 'prev')}) AS pv), 0)::float8 AS previous_lexical
      FROM matched AS x
    ),
    -- With the memory stored after each, whose predecessor is the fetched one, its BM25 known.
    pool_scored AS MATERIALIZED (
      SELECT x.id, x.lexical, x.previous_lexical FROM matched_scored AS x
      UNION ALL
      SELECT nx.id, ${lexicalOf('nx')} AS lexical, x.lexical AS previous_lexical
      FROM matched_scored AS x CROSS JOIN LATERAL (${neighbour('x', 'next')}) AS nx
      WHERE nx.id NOT IN (SELECT id FROM matched)
    ),
    lexical_best AS MATERIALIZED (
      SELECT o.id FROM pool_scored AS o
      WHERE o.lexical + ${share} * o.previous_lexical > 0
      ORDER BY o.lexical + ${share} * o.previous_lexical DESC, o.id
      LIMIT ${q.lexicalDepth}::int
    ),
    first_candidates AS MATERIALIZED (
      SELECT id FROM lexical_best UNION SELECT id FROM nearest
    ),
    first_context AS MATERIALIZED (
      SELECT r.id, (SELECT pv.id FROM (${neighbour('r', 'prev')}) AS pv) AS prev_id,
        (SELECT nx.id FROM (${neighbour('r', 'next')}) AS nx) AS next_id
      FROM first_candidates AS c CROSS JOIN LATERAL ${byId('c.id')} AS r
    ),
    -- The session neighbours of the vector candidates are candidates too.
    candidates AS MATERIALIZED (
      SELECT id FROM first_candidates
      UNION SELECT f.prev_id FROM first_context AS f WHERE f.prev_id IS NOT NULL AND f.id IN (SELECT id FROM nearest)
      UNION SELECT f.next_id FROM first_context AS f WHERE f.next_id IS NOT NULL AND f.id IN (SELECT id FROM nearest)
    ),
    -- The previous memory is looked up once, for its id and its BM25 alike.
    context AS MATERIALIZED (
      SELECT r.id, ${lexicalOf('r')} AS lexical,
        coalesce(${lexicalOf('pv')}, 0)::float8 AS previous_lexical,
        coalesce((SELECT sl.lexical FROM session_lexical AS sl WHERE sl.session_id = r.session_id), 0)::float8
          AS session_lexical,
        pv.id AS prev_id,
        (SELECT nx.id FROM (${neighbour('r', 'next')}) AS nx) AS next_id
      FROM candidates AS c CROSS JOIN LATERAL ${byId('c.id')} AS r
      LEFT JOIN LATERAL (${neighbour('r', 'prev')}) AS pv ON true
    ),
    needed AS MATERIALIZED (
      SELECT c.id, true AS candidate, c.lexical, c.previous_lexical, c.session_lexical, c.prev_id, c.next_id
      FROM context AS c
      UNION ALL
      SELECT x.id, false, 0::float8, 0::float8, 0::float8, NULL::uuid, NULL::uuid FROM (
        SELECT prev_id AS id FROM context WHERE prev_id IS NOT NULL
        UNION SELECT next_id FROM context WHERE next_id IS NOT NULL
      ) AS x WHERE x.id NOT IN (SELECT id FROM candidates)
    ),
    query_vector AS MATERIALIZED (
      SELECT ${queryVector(q.dimensions, q.embedding)} AS v
    )
    SELECT n.id, n.candidate, n.lexical, n.previous_lexical, n.session_lexical, n.prev_id, n.next_id, r.*
    FROM needed AS n
    CROSS JOIN LATERAL (
      SELECT ${contextDistanceTo(q.dimensions, sql`(SELECT v FROM query_vector)`, q.windowShare)}::float8 AS distance,
        ${memoryColumns(q)}
      FROM memories AS m
      WHERE m.tenant_id = ${tenant} AND m.id = n.id
      -- One row per id anyway; the LIMIT keeps this a lookup per row, which a plan made without
      -- the values (src/db/prepared.ts) would otherwise turn into a join over the tenant's rows.
      LIMIT 1
    ) AS r`;
}

/** How many memories the lexical side may read per part (lexicalBudget). */
export const LEXICAL_BUDGET = 1000;

/** How much of each candidate's content to return: enough for a speaker's label and the time cue. */
export const HEAD_CHARS = Math.max(SPEAKER_HEAD_CHARS, TIME_CUE_CHARS);

/** One part of a recall's scope to rank: what the scope read and the lookup statements are built from. */
export interface PartQuery {
  db: Db;
  dimensions: number;
  scope: RecallScope;
  part: Part;
  stats: ScopeStats;
  text: string;
  embedding: Float32Array;
  /** How many candidates each side brings. */
  depth: number;
}

/** A large part and the ids its vector side found (./nearest.ts). */
export interface CandidatesInput extends PartQuery {
  nearest: readonly string[];
}

/** The lexical side and the context of the candidates of a large part, with the ranking's constants. */
export function candidatesQuery(q: CandidatesInput): RawBuilder<CandidateRow> {
  return recallCandidates({
    scope: () => q.db.selectFrom('memories as m').where((eb) => scopeFilter(eb, q.scope, q.part)),
    tenantId: q.scope.tenantId,
    units: scopeUnits(q.scope, q.part),
    stats: q.stats,
    text: q.text,
    embedding: q.embedding,
    dimensions: q.dimensions,
    lexicalDepth: q.depth,
    previousLexicalShare: FUSION.previousLexicalShare,
    conceptShare: FUSION.conceptShare,
    windowShare: FUSION.windowSemanticShare,
    bm25: FUSION.bm25,
    headChars: HEAD_CHARS,
    nearest: q.nearest,
    lexicalBudget: LEXICAL_BUDGET,
  });
}
