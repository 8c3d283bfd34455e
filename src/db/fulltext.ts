import { sql, type RawBuilder } from 'kysely';

/** Every raw full-text fragment lives here. The text search configuration is the one of the generated column. */

/**
 * A tsquery that matches any of the query's lexemes. plainto_tsquery ANDs every term, which finds the
 * evidence for about 1 question in 10 on LoCoMo; an OR of the same lexemes finds it for about 6.
 * Lexemes can contain '&' (URLs: 'example.com/?a=1&b=2') but never a space, so only the operator
 * with its surrounding spaces, as tsquery prints it, is swapped.
 */
export function anyTermQuery(text: string): RawBuilder<string> {
  return sql<string>`replace(plainto_tsquery('english', ${text})::text, ' & ', ' | ')::tsquery`;
}

/** Cover density rank of the stored tsvector against a query built by anyTermQuery. */
export function lexicalRank(tsquery: RawBuilder<string>): RawBuilder<number> {
  return sql<number>`ts_rank_cd(m.search, ${tsquery})`;
}

export function lexicalMatch(tsquery: RawBuilder<string>): RawBuilder<boolean> {
  return sql<boolean>`m.search @@ ${tsquery}`;
}
