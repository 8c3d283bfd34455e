import { z } from 'zod';

/** Field schemas shared by REST bodies, query strings and MCP tool inputs. */

export const agentId = z.string().trim().min(1, 'must not be empty').max(200).describe('The agent acting');
export const anchorExternalId = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(256)
  .describe('The caller-chosen id of a subject (customer, patient, case); created on first store');
// Lenient on version bits: ids from any UUID generator are accepted; unknown ones answer 404.
export const uuid = z.guid('must be a UUID');
export const metadata = z.record(z.string(), z.unknown()).describe('Free-form JSON object kept with the item');
/** Length beyond the configured limit is answered 413, checked where the limit is known. */
export const content = z
  .string()
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
