import { createHash } from 'node:crypto';
import { CompiledQuery, type QueryResult } from 'kysely';
import type { Db } from './connect.js';

/**
 * Statements on recall's hot path run as named prepared statements on Postgres, so that the server
 * parses and plans each of them once per connection instead of on every recall: planning the
 * candidate statement cost more than running it (1.3 ms of bind against 0.4 ms of execution for a
 * typical subject). Only statements whose text is the same for every call may be marked (values go
 * in parameters, lists in arrays), or every call would add a statement to each connection's cache.
 * PGlite runs them as any other statement: the mark is a comment.
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

/** Runs a compiled statement as a prepared one (see above). */
export function executePrepared<R>(db: Db, query: CompiledQuery<R>): Promise<QueryResult<R>> {
  return db.executeQuery<R>(CompiledQuery.raw(MARK + query.sql, [...query.parameters]));
}
