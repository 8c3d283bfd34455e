import { createHash } from 'node:crypto';
import type { CompiledQuery, QueryResult } from 'kysely';
import type { Db } from './connect.js';

/**
 * Statements on recall's hot path run as named prepared statements on Postgres, with generic plans
 * forced (src/db/prepared-driver.ts), so that the server parses and plans each of them once per
 * connection instead of on every recall: planning the candidate statement cost more than running it
 * (1.3 ms of bind against 0.4 ms of execution for a typical subject). A plan made without the values
 * must still reach its rows by index: a prepared statement looks rows up by whole keys (LATERAL …
 * LIMIT 1) rather than joining, which such a plan would do over the whole tenant. Only statements
 * whose text is the same for every call may be prepared (values go in parameters, lists in arrays),
 * or every call would add a statement to each connection's cache. PGlite runs them as any other
 * statement: its dialect ignores the name.
 */

/** A compiled statement that names the prepared statement it runs as. */
export type PreparedQuery<R> = CompiledQuery<R> & { readonly preparedAs: string };

/** The name a compiled statement is to be prepared under, if it is to be. */
export const preparedName = (query: CompiledQuery<unknown>): string | undefined =>
  (query as Partial<PreparedQuery<unknown>>).preparedAs;

const names = new Map<string, string>();
/** How many statement names are remembered; a text beyond them is hashed on every call. */
const MAX_NAMES = 1000;

/** The statement's name on the server: the hash of its text, so one text always has one plan. */
export function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `am_${createHash('sha1').update(text).digest('base64url')}`;
    if (names.size < MAX_NAMES) names.set(text, name);
  }
  return name;
}

/** The compiled statement, to run as a named prepared statement (see above). */
export function prepared<R>(query: CompiledQuery<R>): PreparedQuery<R> {
  return Object.freeze({ ...query, preparedAs: statementName(query.sql) });
}

/**
 * Runs a compiled statement as a prepared one (see above), with a generic plan. Inside a
 * transaction it runs as any other statement: switching the plan mode there would cost a writer two
 * round trips, and a rollback would undo the switch.
 */
export function executePrepared<R>(db: Db, query: CompiledQuery<R>): Promise<QueryResult<R>> {
  return db.executeQuery<R>(db.isTransaction ? query : prepared(query));
}
