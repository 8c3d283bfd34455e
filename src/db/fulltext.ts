import { sql, type RawBuilder } from 'kysely';

/** Every raw full-text fragment lives here. The text search configuration is the one of the generated column. */

/**
 * The query's terms, one row each: `term` (text) and `q` (a tsquery of that term alone). They are the
 * terms of plainto_tsquery split at its ANDs, so that every term is optional: plainto_tsquery ANDs
 * every term, which finds the evidence for about 1 question in 10 on LoCoMo. A phrase (hyphenated
 * words) stays one term. Lexemes can contain '&' (URLs: 'example.com/?a=1&b=2') but never a space,
 * so only the operator with its surrounding spaces, as tsquery prints it, splits. A query of stop
 * words has no terms.
 *
 * `forms` are groups of words that stemming leaves apart (src/text/word-groups.ts), each
 * space-separated: a term that is one of a group's lexemes becomes all of them, ORed
 * ('go' | 'went' | 'gone'), and is marked `alternatives`.
 */
export function queryTerms(
  text: string,
  forms: readonly string[] = [],
): RawBuilder<{ term: string; q: string; alternatives: boolean }> {
  return sql`(
    SELECT DISTINCT coalesce(a.term, x.term) AS term, coalesce(a.term, x.term)::tsquery AS q,
      a.term IS NOT NULL AS alternatives
    FROM regexp_split_to_table(plainto_tsquery('english', ${text})::text, ' & ') AS x(term)
    LEFT JOIN LATERAL (
      SELECT replace(g.q, ' & ', ' | ') AS term
      FROM (SELECT plainto_tsquery('english', f.forms)::text AS q FROM unnest(${[...forms]}::text[]) AS f(forms)) AS g
      WHERE strpos(' ' || replace(g.q, ' & ', ' ') || ' ', ' ' || x.term || ' ') > 0
      LIMIT 1
    ) AS a ON true
    WHERE x.term <> ''
  )`;
}

/**
 * The lexemes of one query term as a text[]: one for a word, several for a phrase. The term is in
 * tsquery's text form, each lexeme quoted with doubled inner quotes.
 */
export function termLexemes(term: RawBuilder<unknown>): RawBuilder<string[]> {
  return sql<string[]>`ARRAY(
    SELECT replace(x.l[1], '''''', '''') FROM regexp_matches(${term}, '''((?:[^'']|'''')*)''', 'g') AS x(l)
  )`;
}

/**
 * One query term restricted to a memory's own words: every lexeme of it at weight A, which the
 * full-text vector gives the content and not its concepts (migration 0010).
 */
export function ownWords(term: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`regexp_replace(${term}, '(''(?:[^'']|'''')*'')', '\\1:A', 'g')::tsquery`;
}

export interface Bm25Parameters {
  /** Term frequency saturation; with binary term frequency it only shapes the length normalization. */
  k1: number;
  /** Length normalization: 0 ignores document length, 1 divides by it fully. */
  b: number;
}

function finite(n: number, what: string): number {
  if (!Number.isFinite(n) || n < 0) throw new Error(`invalid ${what} ${n}`);
  return n;
}

/**
 * Okapi BM25 with binary term frequency (a memory holds a term or not) factors into a sum of idf
 * over the terms a memory holds, times a length normalization. Length is the number of distinct
 * lexemes (tsvector length). Memories are short: on LoCoMo this ranks as well as full BM25.
 */

/** The non-negative idf of Lucene, from the term's document frequency and the number of memories. */
export function bm25Idf(df: RawBuilder<number>, n: RawBuilder<number>): RawBuilder<number> {
  return sql<number>`ln(1 + (${n} - ${df} + 0.5) / (${df} + 0.5))`;
}

/** (k1 + 1) / (1 + k1 × (1 − b + b × len / avgLen)): the BM25 weight of a held term per unit of idf. */
export function bm25LengthNorm(
  len: RawBuilder<number>,
  avgLen: RawBuilder<number>,
  p: Bm25Parameters,
): RawBuilder<number> {
  const k1 = finite(p.k1, 'k1');
  const b = finite(p.b, 'b');
  return sql<number>`(${sql.lit(k1 + 1)} / (1 + ${sql.lit(k1)} * (1 - ${sql.lit(b)} + ${sql.lit(b)} * ${len} / ${avgLen})))`;
}
