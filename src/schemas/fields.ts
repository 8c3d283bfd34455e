import { z } from 'zod';
// Plain messages for every schema below, wherever it is parsed.
import './messages.js';
import { parseFilter } from '../filter/language.js';

/** Field schemas shared by REST bodies, query strings and MCP tool inputs. */

/**
 * Why Postgres cannot store a string as it is, or undefined. Text and jsonb cannot hold U+0000, and a
 * lone UTF-16 surrogate has no UTF-8 form: jsonb refuses it (a driver error) and text silently
 * turns it into U+FFFD. Both are refused here, the one check every input string passes.
 */
// With the u flag a surrogate pair reads as one code point, so only a lone surrogate matches
// (String.prototype.isWellFormed, which the ES2023 lib of this build does not declare).
const LONE_SURROGATE = /\p{Surrogate}/u;

export function unstorable(s: string): string | undefined {
  if (s.includes('\u0000')) return 'must not contain the character U+0000';
  if (LONE_SURROGATE.test(s)) return 'must not contain a lone UTF-16 surrogate';
  return undefined;
}

const storable = (s: string, ctx: z.RefinementCtx): void => {
  const problem = unstorable(s);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
};

/** A string that Postgres can store. */
export const text = () => z.string().superRefine(storable);

export const agentId = text().trim().min(1, 'must not be empty').max(200).describe('The agent acting');
export const anchorExternalId = text()
  .trim()
  .min(1, 'must not be empty')
  .max(256)
  .describe('The caller-chosen id of a subject (customer, patient, case); created on first store');
// Lenient on version bits: ids from any UUID generator are accepted; unknown ones answer 404.
export const uuid = z.guid('must be a UUID');

/** How deep metadata may nest, in the API and in every import format. */
export const METADATA_MAX_DEPTH = 32;

/** What Postgres jsonb would refuse (see unstorable, in keys and values) or fail on (deep nesting exhausts its stack). */
function metadataProblem(value: unknown): string | undefined {
  // Iterative, so that a body of a million brackets cannot exhaust our own stack either.
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item === 'string' && unstorable(item)) return unstorable(item);
    if (item === null || typeof item !== 'object') continue;
    if (depth > METADATA_MAX_DEPTH) return `must not nest deeper than ${METADATA_MAX_DEPTH} levels`;
    for (const [key, child] of Object.entries(item)) {
      const keyProblem = unstorable(key);
      if (keyProblem) return `key ${keyProblem}`;
      pending.push([child, depth + 1]);
    }
  }
  return undefined;
}

export const metadata = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    const problem = metadataProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .describe('Free-form JSON object kept with the item');
/** Length beyond the configured limit is answered 413, checked where the limit is known. */
export const content = text()
  .refine((s) => s.trim().length > 0, 'must not be empty')
  .describe('The memory text: one self-contained statement works best');
export const limit = (fallback: number, max: number) => {
  // One message for every way a limit can be wrong: "abc", "1.5", "0" and "500" all get the range.
  const message = `must be a whole number between 1 and ${max}`;
  return z.coerce
    .number({ error: message })
    .int(message)
    .min(1, message)
    .max(max, message)
    .default(fallback)
    .describe(`How many items, 1..${max}`);
};
export const cursor = text().min(1).max(500).describe('next_cursor of the previous page');
export const booleanFlag = z
  .enum(['true', 'false'])
  .transform((v) => v === 'true')
  .describe('true or false');
export const isoTime = z.string().describe('ISO-8601 time, UTC');

/** Dates outside these years are no client's intent, and some are beyond what the database engines accept. */
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(10000, 0, 1);
/** An ISO-8601 time with an offset, between 1970 and 9999. */
export const dateTime = () =>
  z.iso.datetime({ offset: true }).refine((s) => {
    const ms = Date.parse(s);
    return ms >= EARLIEST && ms < LATEST;
  }, 'must be a time between the years 1970 and 9999');

/** A limit in a JSON body: a number, as JSON has them (limit() also takes the query string's text). */
export const jsonLimit = (fallback: number, max: number) => {
  const message = `must be a whole number between 1 and ${max}`;
  return z
    .number({ error: message })
    .int(message)
    .min(1, message)
    .max(max, message)
    .default(fallback)
    .describe(`How many items, 1..${max}`);
};

/** docs/api.md, "Filters": what a filter says, for REST and the OpenAPI document. */
const FILTER_DESCRIPTION =
  'Only memories that pass this filter (docs/api.md, "Filters"): {"metadata.topic": "billing"} is short for ' +
  '{"metadata.topic": {"$eq": "billing"}}; operators $eq $ne $in $nin $gt $gte $lt $lte $exists on ' +
  'metadata.<key> and on agent_id, binding, occurred_at, created_at, pinned; $and, $or, $not to combine';

function checkFilter(value: unknown, ctx: z.RefinementCtx): void {
  const parsed = parseFilter(value);
  if (!parsed.ok) ctx.addIssue({ code: 'custom', path: parsed.issue.path, message: parsed.issue.message });
}

/** A filter as a JSON value (a body, an MCP argument); its tree is read with checkedFilter. */
export const memoryFilter = z.record(z.string(), z.unknown()).superRefine(checkFilter).describe(FILTER_DESCRIPTION);

/** The longest filter a query string may carry. */
export const FILTER_PARAM_MAX_LENGTH = 8000;

/** A filter in a query string: the same JSON, URL-encoded. */
export const memoryFilterParam = text()
  .max(FILTER_PARAM_MAX_LENGTH, `must be at most ${FILTER_PARAM_MAX_LENGTH} characters`)
  .transform((s, ctx): unknown => {
    try {
      const value: unknown = JSON.parse(s);
      checkFilter(value, ctx);
      return value;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object' });
      return z.NEVER;
    }
  })
  .describe(`${FILTER_DESCRIPTION}. JSON, URL-encoded`);
