import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';

/**
 * `column = ANY(ids)`: one array parameter however many ids, so that the statement's text stays the
 * same from call to call (src/db/prepared.ts), where `IN (…)` has one parameter per id.
 */
export function anyOf(column: Expression<unknown>, ids: readonly string[]): RawBuilder<SqlBool> {
  return sql<SqlBool>`${column} = ANY(${ids}::uuid[])`;
}
