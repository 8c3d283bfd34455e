import { AppError } from '../../errors.js';

/** Characters are code points, as Postgres' char_length counts them: an emoji is one, not two. */
function codePoints(s: string): number {
  let count = 0;
  for (const _ of s) count++;
  return count;
}

/** CONTENT_LIMIT_CHARS (docs/api.md §2): what a caller writes is refused whole, never cut. */
export function assertContentLimit(content: string, limitChars: number, path = 'content'): void {
  // UTF-16 length is never below the code point count, so the short case needs no counting.
  if (content.length > limitChars && codePoints(content) > limitChars) {
    throw new AppError('payload_too_large', `${path} is longer than ${limitChars} characters`, [
      { path, message: `must be at most ${limitChars} characters` },
    ]);
  }
}
