import { AppError } from '../../errors.js';
import { isUuid } from '../text.js';

/** Cursors are opaque to clients: base64url JSON of the last row's sort key. */
export function encodeCursor(key: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

export function decodeCursor(cursor: string, shape: readonly ('string' | 'number')[]): (string | number)[] {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  // Numbers in cursors are positions and sequence numbers: a fraction or a huge value is forged,
  // and would otherwise reach the database as a bad bigint.
  const fits = (v: unknown, i: number): boolean =>
    typeof v === shape[i] && (typeof v !== 'number' || (Number.isSafeInteger(v) && v >= 0));
  if (!Array.isArray(value) || value.length !== shape.length || !value.every(fits)) {
    throw invalidCursor();
  }
  return value as (string | number)[];
}

export const invalidCursor = (): AppError =>
  new AppError('invalid_request', 'cursor is not valid', [
    { path: 'cursor', message: 'not a cursor returned by this list' },
  ]);

const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * A (created_at, id) cursor, checked so that a forged one cannot reach the database as bad SQL input:
 * only what toPage wrote passes (a Date's own ISO form, years 1..9999 that Postgres accepts, a UUID).
 */
export function decodeTimeIdCursor(cursor: string): [string, string] {
  const [at, id] = decodeCursor(cursor, ['string', 'string']) as [string, string];
  const time = new Date(at);
  const valid =
    CURSOR_TIME.test(at) && !Number.isNaN(time.getTime()) && time.toISOString() === at && time.getUTCFullYear() >= 1;
  if (!valid || !isUuid(id)) throw invalidCursor();
  return [at, id];
}

/**
 * A cursor for a list ranked by something that changes as time passes (decayed confidence): a
 * position, not a key. decodeCursor keeps it a safe non-negative integer, so a forged huge offset
 * never reaches Postgres (which answers it with an out-of-range error).
 */
export function decodeOffsetCursor(cursor: string | undefined): number {
  return cursor ? Number(decodeCursor(cursor, ['number'])[0]) : 0;
}

export const encodeOffsetCursor = (offset: number): string => encodeCursor([offset]);

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Takes a page from rows fetched with limit + 1, so a next page is known to exist. */
export function toPage<R, T>(
  rows: R[],
  limit: number,
  key: (row: R) => (string | number)[],
  map: (row: R) => T,
): Page<T> {
  const more = rows.length > limit;
  const pageRows = more ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return {
    items: pageRows.map(map),
    nextCursor: more && last !== undefined ? encodeCursor(key(last)) : null,
  };
}
