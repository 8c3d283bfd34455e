import { z } from 'zod';

/** Field schemas shared by REST bodies, query strings and MCP tool inputs. */

// Postgres text and jsonb cannot hold U+0000: such input is refused here instead of failing in the driver.
const NUL_MESSAGE = 'must not contain the character U+0000';
const hasNul = (s: string): boolean => s.includes('\u0000');
/** A string that Postgres can store. */
export const text = () => z.string().refine((s) => !hasNul(s), NUL_MESSAGE);

export const agentId = text().trim().min(1, 'must not be empty').max(200).describe('The agent acting');
export const anchorExternalId = text()
  .trim()
  .min(1, 'must not be empty')
  .max(256)
  .describe('The caller-chosen id of a subject (customer, patient, case); created on first store');
// Lenient on version bits: ids from any UUID generator are accepted; unknown ones answer 404.
export const uuid = z.guid('must be a UUID');

const METADATA_MAX_DEPTH = 32;

/** What Postgres jsonb would refuse (U+0000 anywhere) or fail on (deep nesting exhausts its stack). */
function metadataProblem(value: unknown): string | undefined {
  // Iterative, so that a body of a million brackets cannot exhaust our own stack either.
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item === 'string' && hasNul(item)) return NUL_MESSAGE;
    if (item === null || typeof item !== 'object') continue;
    if (depth > METADATA_MAX_DEPTH) return `must not nest deeper than ${METADATA_MAX_DEPTH} levels`;
    for (const [key, child] of Object.entries(item)) {
      if (hasNul(key)) return NUL_MESSAGE;
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
export const limit = (fallback: number, max: number) =>
  z.coerce.number().int().min(1).max(max).default(fallback).describe(`How many items, 1..${max}`);
export const cursor = z.string().min(1).max(500).describe('next_cursor of the previous page');
export const booleanFlag = z
  .enum(['true', 'false'])
  .transform((v) => v === 'true')
  .describe('true or false');
export const isoTime = z.string().describe('ISO-8601 time, UTC');
