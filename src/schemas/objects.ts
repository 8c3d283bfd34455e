import { z } from 'zod';
import { ERROR_STATUS, type ErrorCode } from '../errors.js';
import { AUDIT_ACTIONS, BINDINGS, SCOPES } from '../vocabulary.js';

/** The response objects of docs/api.md §3, for the OpenAPI document and for tests that check bodies. */

const time = z.string().describe('ISO-8601, UTC');
const nullableId = z.string().nullable();
const json = z.record(z.string(), z.unknown());

export const MemoryObject = z.object({
  id: z.string(),
  agent_id: z.string(),
  content: z.string(),
  binding: z.enum(BINDINGS),
  anchor_id: nullableId,
  anchor_external_id: z.string().nullable(),
  session_id: nullableId,
  status: z.enum(['active', 'superseded']),
  confidence: z.number().min(0).max(1),
  effective_confidence: z
    .number()
    .min(0)
    .max(1)
    .describe("Confidence decayed to now (to as_of in a recall as of a time); a pinned memory's does not decay"),
  reinforcement_count: z.number().int(),
  superseded_by: nullableId.describe('The memory that superseded it; null while it is active'),
  superseded_at: time.nullable().describe('When it was superseded; null while it is active'),
  metadata: json,
  occurred_at: time.describe(
    "When what it says happened or was said (a message's time); when it was stored by default",
  ),
  created_at: time.describe('When it was stored'),
  updated_at: time,
  last_reinforced_at: time,
  expires_at: time.nullable().describe('When it leaves recall and the lists (unless pinned); null for never'),
  pinned: z.boolean().describe('A pinned memory does not decay, expire or get superseded silently'),
});

export const StoredMemoryObject = MemoryObject.extend({
  outcome: z.enum(['created', 'reinforced', 'promoted']),
  supersedes: z.array(z.string()).optional(),
  contradicts: z
    .array(z.string())
    .optional()
    .describe('Pinned memories this one contradicts: a pinned memory is never superseded by a store and stays active'),
});

export const CorrectedMemoryObject = MemoryObject.extend({
  corrects: z.string().describe('The corrected memory, now superseded by this one'),
});

export const IngestResponse = z.object({
  extractor: z.string().describe('"anthropic:<model>" or "heuristic": what produced the facts'),
  memories: z.array(StoredMemoryObject).describe('One per fact stored, in order'),
  skipped_messages: z.number().int().describe('Messages of this conversation_id ingested before, by id'),
});

const importCounts = { anchors: z.number().int(), sessions: z.number().int(), memories: z.number().int() };
export const ImportResultObject = z.object({
  lines: z.number().int().describe('The number of the last line read'),
  imported: z.object({ ...importCounts, canon: z.number().int(), audit: z.number().int() }),
  existing: z.number().int().describe('Records left as they were: their id (or subject external id) exists'),
});

export const ScoreDetailsObject = z.object({
  semantic: z.number().describe('Vector similarity, min-max normalized over the candidates'),
  lexical: z.number().describe('Full-text rank, divided by the best candidate rank'),
  confidence: z.number().describe('Effective (decayed) confidence'),
  recency: z
    .number()
    .describe('Boost factor for session and anchored memories that happened (occurred_at) or were reinforced recently'),
  prior: z
    .number()
    .describe("Factor from the memory's length and, for a question about time, whether it states a time"),
});

export const RecallResultObject = MemoryObject.extend({ score: z.number(), score_details: ScoreDetailsObject });

export const RecallResponse = z.object({ results: z.array(RecallResultObject) });

export const AnchorObject = z.object({
  id: z.string(),
  anchor_external_id: z.string(),
  name: z.string().nullable(),
  metadata: json,
  created_at: time,
  memory_count: z.number().int(),
  last_activity_at: time.nullable().describe('When any of its memories last changed; null without memories'),
});

export const SessionObject = z.object({
  id: z.string(),
  agent_id: z.string(),
  anchor_id: nullableId,
  anchor_external_id: z.string().nullable(),
  status: z.enum(['active', 'ended']),
  started_at: time,
  ended_at: time.nullable(),
  expires_at: time.nullable(),
  metadata: json,
});

export const CanonObject = z.object({
  id: z.string(),
  agent_id: z.string(),
  content: z.string(),
  binding: z.literal('canon'),
  metadata: json,
  created_at: time,
});

export const AuditEventObject = z.object({
  id: z.string(),
  at: time,
  action: z.enum(AUDIT_ACTIONS),
  memory_id: nullableId,
  anchor_id: nullableId,
  session_id: nullableId,
  actor: z.object({ key_id: nullableId, agent_id: z.string().nullable() }),
  changes: json,
});

export const KeyObject = z.object({
  id: z.string(),
  name: z.string(),
  key_prefix: z.string(),
  scopes: z.array(z.enum(SCOPES)),
  created_at: time,
  last_used_at: time.nullable(),
  revoked_at: time.nullable(),
  agent_ids: z
    .array(z.string())
    .nullable()
    .describe('The only agents the key may act as; null when it may act as any agent of the tenant'),
});

export const CurrentKeyObject = KeyObject.extend({ tenant_id: z.string() });

export const CreatedKeyObject = KeyObject.omit({ last_used_at: true, revoked_at: true }).extend({
  api_key: z.string().describe('Shown once; only its prefix is ever shown again'),
});

export const SetupResponse = z.object({ tenant_id: z.string(), api_key: z.string(), message: z.string() });

export const FieldErrorObject = z.object({
  path: z.string().describe('The field, dotted for nested ones (messages.0.created_at); body or query for the whole'),
  message: z.string().describe('What the field must be, in plain words'),
});

/** RFC 9457 problem details, as src/errors.ts toProblem writes them. */
export const ProblemObject = z.object({
  type: z.string().describe('A URI naming the error code'),
  title: z.string(),
  status: z.number().int(),
  code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]).describe('One code of docs/api.md §2'),
  detail: z.string().describe('What went wrong, in one sentence'),
  errors: z.array(FieldErrorObject).optional().describe('Every field that failed validation'),
});

export const BatchItemResultObject = z
  .object({
    outcome: z
      .enum(['created', 'reinforced', 'promoted'])
      .optional()
      .describe('What the store did, as POST /v1/memories answers it: absent when the item failed'),
    memory: StoredMemoryObject.optional().describe('The memory stored or reinforced'),
    problem: ProblemObject.optional().describe(
      "Why the item was not stored, as POST /v1/memories would answer it; field paths are the item's own",
    ),
  })
  .describe('One result per item, in the order of the items: outcome and memory, or problem');

export const StoreBatchResponse = z.object({ results: z.array(BatchItemResultObject) });

/** The answer of a route that embeds text while a network embedder fails (src/embedding/unavailable.ts). */
export const EMBEDDING_UNAVAILABLE = {
  description: 'The embedding service did not answer; nothing was stored, retry shortly',
  schema: ProblemObject,
};

/** The answer of a route that takes an agent id, for a key without the scope or bound to other agents. */
export const AGENT_REFUSED = {
  description:
    'insufficient_scope: the key lacks the scope, or is bound to agents (agent_ids) and the request names another agent',
  schema: ProblemObject,
};

export const listOf = <T extends z.ZodType>(key: string, item: T) =>
  z.object({ [key]: z.array(item), next_cursor: z.string().nullable() });
