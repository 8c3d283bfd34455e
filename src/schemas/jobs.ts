import { z } from 'zod';
import { booleanFlag, cursor, limit } from './fields.js';
import { ImportResultObject, IngestResponse, ProblemObject, StoreBatchResponse } from './objects.js';
import { JOB_KIND_NAMES, JOB_STATES } from '../vocabulary.js';

const time = z.string().describe('ISO-8601, UTC');

export const JobObject = z.object({
  id: z.string(),
  kind: z.enum(JOB_KIND_NAMES).describe('What the job does: the request it was handed with ?async=true'),
  state: z.enum(JOB_STATES),
  agent_ids: z
    .array(z.string())
    .nullable()
    .describe('The agents the job acts for; null: any agent (a key bound to agents does not see it)'),
  progress: z
    .record(z.string(), z.number().int())
    .describe(
      'Counts so far: ingest {messages, messages_done, memories}, import {bytes, bytes_read}, batch {items, items_done}; the final ones once finished',
    ),
  result: z
    .union([IngestResponse, ImportResultObject, StoreBatchResponse])
    .nullable()
    .describe('Once succeeded: the body the synchronous call answers'),
  error: ProblemObject.nullable().describe('Once failed: why, as the synchronous call would have answered'),
  attempts: z.number().int().describe('How many times a process started it (more than 1: resumed after a restart)'),
  created_at: time,
  started_at: time.nullable(),
  finished_at: time.nullable(),
});

export const JobsQuery = z.strictObject({
  state: z.enum(JOB_STATES).optional().describe('Only jobs in this state'),
  kind: z.enum(JOB_KIND_NAMES).optional().describe('Only jobs of this kind'),
  limit: limit(20, 100),
  cursor: cursor.optional(),
});

export const AsyncQuery = {
  async: booleanFlag
    .optional()
    .describe('true: answer 202 with a job at once and do the work in the background (GET /v1/jobs/{id})'),
};
