import { createHash } from 'node:crypto';
import { CompiledQuery, type QueryResult } from 'kysely';
import type { Db } from './connect.js';

/**
 * Statements on recall's hot path run as named prepared statements on Postgres, with generic plans
 * forced (src/db/connect.ts), so that the server parses and plans each of them once per connection
 * instead of on every recall: planning the candidate statement cost more than running it (1.3 ms of
 * bind against 0.4 ms of execution for a typical subject). A plan made without the values must
 * still reach its rows by index: a marked statement looks rows up by whole keys (LATERAL … LIMIT 1)
 * rather than joining, which such a plan would do over the whole tenant. Only statements whose text
 * is the same for every call may be marked (values go in parameters, lists in arrays), or every
 * call would add a statement to each connection's cache. PGlite runs them as any other statement:
 * the mark is a comment.
 */
const MARK = '/* prepared */ ';

export const isPrepared = (text: string): boolean => text.startsWith(MARK);

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

/**
 * Runs a compiled statement as a prepared one (see above), with a generic plan (src/db/connect.ts).
 * Inside a transaction it runs as any other statement: switching the plan mode there would cost a
 * writer two round trips, and a rollback would undo the switch.
 */
export function executePrepared<R>(db: Db, query: CompiledQuery<R>): Promise<QueryResult<R>> {
  if (db.isTransaction) return db.executeQuery<R>(query);
  return db.executeQuery<R>(CompiledQuery.raw(MARK + query.sql, [...query.parameters]));
}
