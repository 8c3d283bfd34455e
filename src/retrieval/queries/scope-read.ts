import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import {
  HEAD_CHARS,
  MEMORY_FIELD_NAMES,
  memorySelections,
  termFrequency,
  termsCte,
  type CandidateRow,
} from './candidates.js';
import type { Db } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import { NAMED_SUBJECT, unitColumns, type ScopeUnit } from '../../db/scope-stats.js';
import { FUSION } from '../fusion.js';
import { scopeFilter, scopeUnits, type Part, type ScopeToRead } from './scope.js';
import { contextDistanceTo, queryVector } from '../../db/vector.js';

/**
 * A recall's scope in one statement: the statistics of each of its parts (the subject's memories,
 * canon) from the counters that migration 0006 keeps, each query term's document frequency in it,
 * and, for each part small enough, every memory of it with what ranking needs (src/retrieval/
 * scan-rank.ts ranks them in process). A part too large to read whole comes back as its
 * statistics alone, for the bounded lookup statements (src/retrieval/queries/candidates.ts). The subject may be
 * named by a subquery (`subject`), looked up here too: a typical recall's scope costs one round trip.
 *
 * Written for a plan made without the values (src/db/prepared.ts): counters by whole key
 * (LATERAL … LIMIT 1), and each part's read behind a condition on its own statistics, which a
 * generic plan evaluates before reading (a gating Result), so a large part costs nothing here.
 */

type ScopeDb = Database & { m: Database['memories'] };

export interface ScopeReadPart {
  /** `memories m` restricted to what the caller may see; its subject may be `(SELECT id FROM subject)`. */
  scope: () => SelectQueryBuilder<ScopeDb, 'm', object>;
  /** The units the part is made of; a NAMED_SUBJECT unit is the subject `subject` finds. */
  units: readonly ScopeUnit[];
  /** Read the part even with no active memory (superseded ones are asked for; the counters count active ones). */
  readEmpty: boolean;
}

export interface ScopeReadQuery {
  tenantId: string;
  parts: readonly ScopeReadPart[];
  /** A scalar subquery naming the subject of NAMED_SUBJECT units; NULL for none. */
  subject: RawBuilder<string | null>;
  /** A part of more active memories than this is not read. */
  maxDocs: number;
  text: string;
  embedding: Float32Array;
  dimensions: number;
  /** Share of a memory's distance that its window vector's makes (FUSION.windowSemanticShare). */
  windowShare: number;
  /** How much of each memory's content to return (enough for a speaker's label and the time cue). */
  headChars: number;
}

/** A memory of a part that was read whole, as src/retrieval/scan-rank.ts ranks it. */
export type ScannedMemory = Pick<
  CandidateRow,
  | 'id'
  | 'distance'
  | 'binding'
  | 'session_id'
  | 'confidence'
  | 'decay_rate'
  | 'last_reinforced_ms'
  | 'recent_ms'
  | 'metadata_speaker'
  | 'head'
  | 'lexemes'
> & {
  seq: number;
  /** The query terms it holds, by k: k when in its own words, -k when only among its concepts; null for none. */
  hits: number[] | null;
};

/**
 * Per part, one row with a null id, its statistics and the subject's id, then one per memory when
 * the part is read whole. What every row would repeat comes once, in the part's first row: parsing
 * it on each row cost more than the rest of a 1,000-memory part's.
 */
export type ScopeReadRow =
  ScopeReadHeader | ({ part: number; subject_id: null; docs: null; total_len: null; df: null } & ScannedMemory);

export type ScopeReadHeader = {
  part: number;
  subject_id: string | null;
  docs: number;
  total_len: number;
  /** Each query term's document frequency in the part, by k (df[k - 1]). */
  df: number[];
} & { [K in keyof ScannedMemory]: null };

/** The columns of a memory's row, in order: a part's first row has them all null. */
const MEMORY_COLUMNS = ['id', 'seq', 'distance', 'hits', ...MEMORY_FIELD_NAMES] as const;

export function scopeReadQuery(q: ScopeReadQuery): RawBuilder<ScopeReadRow> {
  if (!Number.isInteger(q.maxDocs) || q.maxDocs < 0) throw new Error('invalid scope read bound');
  const units = q.parts.flatMap((p) => p.units);
  const partOf = q.parts.flatMap((p, i) => p.units.map(() => i));
  const c = unitColumns(units);
  const distance = contextDistanceTo(q.dimensions, sql`(SELECT v FROM query_vector)`, q.windowShare);
  const hits = sql<number[] | null>`nullif(ARRAY(
    SELECT CASE WHEN m.search @@ t.own THEN t.k ELSE -t.k END FROM terms AS t WHERE m.search @@ t.q ORDER BY t.k
  ), '{}')`;
  const reads = q.parts.map((p, i) =>
    p
      .scope()
      .select(['m.id', 'm.seq'])
      .select(distance.as('distance'))
      .select(hits.as('hits'))
      .select(memorySelections(q))
      .where(
        sql<boolean>`st.part = ${sql.lit(i)} AND st.docs <= ${q.maxDocs}::float8${p.readEmpty ? sql`` : sql` AND st.docs > 0`}`,
      ),
  );
  return sql<ScopeReadRow>`
    WITH subject AS MATERIALIZED (SELECT ${q.subject}::uuid AS id),
    query_vector AS MATERIALIZED (SELECT ${queryVector(q.dimensions, q.embedding)} AS v),
    ${termsCte(q.text)},
    units AS MATERIALIZED (
      SELECT u.part, memory_stats_unit(u.b, u.a, coalesce(u.an, (SELECT id FROM subject)), u.s) AS key
      FROM unnest(${partOf}::int[], ${c.binding}::text[], ${c.agent}::text[], ${c.anchor}::uuid[], ${c.session}::uuid[])
        AS u(part, b, a, an, s)
    ),
    part_stats AS MATERIALIZED (
      SELECT u.part, array_agg(u.key) AS keys,
        coalesce(sum(x.docs), 0)::float8 AS docs, coalesce(sum(x.total_len), 0)::float8 AS total_len
      FROM units AS u LEFT JOIN LATERAL (
        SELECT x.docs, x.total_len FROM memory_unit_stats AS x WHERE x.tenant_id = ${q.tenantId} AND x.unit = u.key LIMIT 1
      ) AS x ON true
      GROUP BY u.part
    ),
    parts AS MATERIALIZED (
      SELECT p.part, p.docs, p.total_len, coalesce((
        SELECT array_agg(${termFrequency(q.tenantId, sql`p.keys`)} ORDER BY terms.k) FROM terms
      ), '{}')::float8[] AS df
      FROM part_stats AS p
    )
    SELECT st.part, ${sql.join(
      (['subject_id', 'docs', 'total_len', 'df'] as const).map(
        (c) =>
          sql`CASE WHEN r.id IS NULL THEN ${c === 'subject_id' ? sql`(SELECT id FROM subject)` : sql.ref(`st.${c}`)} END AS ${sql.id(c)}`,
      ),
    )}, r.*
    FROM parts AS st
    CROSS JOIN LATERAL (
      ${sql.join(reads, sql` UNION ALL `)}
      -- Last, so that its nulls take the types of the reads' columns.
      UNION ALL SELECT ${sql.join(MEMORY_COLUMNS.map((c) => sql`NULL AS ${sql.id(c)}`))}
    ) AS r`;
}

/**
 * Parts of a scope (the subject's memories, canon) of at most this many memories (counted active)
 * are read whole by the scope read and ranked in process (src/retrieval/scan-rank.ts): for a
 * typical subject that one prepared statement is all the ranking costs the database. Larger parts
 * take the bounded lookup statements (./nearest.ts, ./candidates.ts), planned for their values,
 * where planning is the lesser cost and the choice between the scope's indexes and the full-text
 * index matters. With superseded memories asked for, the read includes those too.
 */
export const PREPARED_SCOPE_MAX = 2000;

/** The scope to read, which of its parts, and the query they are ranked against. */
export interface ScopeReadInput {
  db: Db;
  dimensions: number;
  toRead: ScopeToRead;
  parts: readonly Part[];
  text: string;
  embedding: Float32Array;
}

/** The scope read of a recall, with the ranking's constants. */
export function scopeReadStatement(q: ScopeReadInput): RawBuilder<ScopeReadRow> {
  const { scope, named } = q.toRead;
  const subject = sql<string | null>`(SELECT id FROM subject)`;
  return scopeReadQuery({
    tenantId: scope.tenantId,
    parts: q.parts.map((part) => ({
      scope: () =>
        q.db.selectFrom('memories as m').where((eb) => scopeFilter(eb, scope, part, named ? subject : scope.anchorId)),
      units: [...scopeUnits(scope, part), ...(named && part === 'subject' ? [NAMED_SUBJECT] : [])],
      readEmpty: scope.includeSuperseded,
    })),
    subject: named ?? sql`NULL`,
    maxDocs: PREPARED_SCOPE_MAX,
    text: q.text,
    embedding: q.embedding,
    dimensions: q.dimensions,
    windowShare: FUSION.windowSemanticShare,
    headChars: HEAD_CHARS,
  });
}
