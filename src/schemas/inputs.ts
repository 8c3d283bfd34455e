import { z } from 'zod';
import {
  agentId,
  anchorExternalId,
  booleanFlag,
  content,
  cursor,
  dateTime,
  jsonLimit,
  limit,
  memoryFilter,
  memoryFilterParam,
  metadata,
  text,
  uuid,
} from './fields.js';
import { AUDIT_ACTIONS, SCOPES } from '../vocabulary.js';

/** POST /v1/memories/batch takes at most this many items (docs/api.md §4). */
export const BATCH_MAX_ITEMS = 500;

/**
 * Every body and query object is strict: an unknown field (a typo such as anchor_externalid) is
 * refused with 400 naming it, never dropped, since a dropped subject would store an unscoped memory.
 */

export const SetupBody = z.strictObject({ org_name: text().trim().min(1, 'must not be empty').max(200) });

export const CreateKeyBody = z.strictObject({
  name: text().trim().min(1, 'must not be empty').max(200),
  scopes: z
    .array(z.enum(SCOPES))
    .min(1, 'must name at least one scope')
    .default(['read', 'write'])
    .describe('read, write, admin; a key with admin is an mk_ key'),
  agent_ids: z
    .array(agentId)
    .min(1, 'must name at least one agent; leave it out for a key that may act as any agent')
    .max(100)
    .nullable()
    .default(null)
    .describe(
      "The only agents the key may act as: another agent_id is refused with 403, and other agents' private memories are invisible to it. Leave out (or null) for a key that may act as any agent",
    ),
});

export const IdParams = z.strictObject({ id: text() });

/** docs/api.md "Time": at most about a century of time to live. */
export const TTL_SECONDS_MAX = 100 * 366 * 24 * 3600;

/** A memory's end of life and pin, as a store and PATCH /v1/memories/{id} take them. */
const lifeFields = {
  expires_at: dateTime()
    .nullable()
    .optional()
    .describe(
      'When it leaves recall and the lists (the sweeper deletes it later); null for never. Not with ttl_seconds',
    ),
  ttl_seconds: z
    .number()
    .int('must be a whole number of seconds')
    .min(1, 'must be at least 1')
    .max(TTL_SECONDS_MAX, `must be at most ${TTL_SECONDS_MAX} (about a century)`)
    .optional()
    .describe('Seconds from now until it expires; the same as expires_at, relative. Not with expires_at'),
  pinned: z
    .boolean()
    .optional()
    .describe('Pinned: it does not decay, never expires, and a contradicting store leaves it active (contradicts)'),
};

/** expires_at and ttl_seconds say the same thing twice: one of them at most. */
const oneExpiry = (
  body: { expires_at?: string | null | undefined; ttl_seconds?: number | undefined },
  ctx: z.RefinementCtx,
) => {
  if (body.expires_at !== undefined && body.ttl_seconds !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['ttl_seconds'], message: 'give expires_at or ttl_seconds, not both' });
  }
};

export const StoreMemoryBody = z
  .strictObject({
    agent_id: agentId,
    content,
    anchor_external_id: anchorExternalId.optional(),
    anchor_id: uuid.optional(),
    session_id: uuid.optional(),
    metadata: metadata.optional(),
    occurred_at: dateTime()
      .optional()
      .describe('When what it says happened or was said; when it is stored by default. Recency counts from it'),
    ...lifeFields,
  })
  .superRefine(oneExpiry);

/**
 * An item is checked on its own (src/http/routes/memories.ts), so that a bad item fails alone: here
 * it passes whatever it holds (`catch`), and the document still shows StoreMemoryRequest.
 */
const BatchItemBody = StoreMemoryBody.catch((ctx) => ctx.value as z.output<typeof StoreMemoryBody>);

export const StoreBatchBody = z.strictObject({
  items: z
    .array(BatchItemBody)
    .min(1, 'must hold at least one item')
    .max(BATCH_MAX_ITEMS, `must hold at most ${BATCH_MAX_ITEMS} items`)
    .describe(
      `Up to ${BATCH_MAX_ITEMS} memories, each the body of POST /v1/memories; an item that is not valid fails alone`,
    ),
});

export const CorrectMemoryBody = z
  .strictObject({
    content: content
      .optional()
      .describe(
        'The corrected text; a new memory holding it supersedes this one. Leave out to change only expiry or pin',
      ),
    agent_id: agentId
      .optional()
      .describe(
        'Which agent corrects it, for the audit trail; left out, the key alone (a person), or the one agent of a key bound to one',
      ),
    metadata: metadata
      .optional()
      .describe("The new memory's metadata; the corrected memory's metadata is carried over when left out"),
    ...lifeFields,
  })
  .superRefine(oneExpiry)
  .superRefine((body, ctx) => {
    const changes = [body.content, body.expires_at, body.ttl_seconds, body.pinned];
    if (changes.every((v) => v === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: 'must give content, or expires_at, ttl_seconds or pinned',
      });
    }
    if (body.content === undefined && body.metadata !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['metadata'], message: 'goes with a corrected content only' });
    }
  });

export const RecallQuery = z.strictObject({
  agent_id: agentId,
  query: text().trim().min(1, 'must not be empty').max(2000).describe('What to look for'),
  anchor_external_id: anchorExternalId.optional(),
  anchor_id: uuid.optional(),
  session_id: uuid.optional(),
  limit: limit(10, 100),
  include_superseded: booleanFlag
    .default(false)
    .describe('Return superseded memories too, each marked with superseded_by and superseded_at'),
  as_of: dateTime()
    .optional()
    .describe(
      'Answer as of this past moment: what was stored by then and not superseded by then, confidence decayed to it. Deleted and purged memories are gone',
    ),
});

/**
 * POST /v1/memories/recall: the GET query's fields, as JSON (a flag is a boolean, not "true"), and a
 * filter. Extended from RecallQuery, so that a field the query gains is a field of the body too.
 */
export const RecallBody = RecallQuery.extend({
  limit: jsonLimit(10, 100),
  include_superseded: z.boolean().default(false).describe('true: superseded memories too'),
  filter: memoryFilter.optional(),
});

/** A list of memories: a page of it, and a filter (docs/api.md, "Filters"). */
export const FilteredPageQuery = z.strictObject({
  limit: limit(50, 200),
  cursor: cursor.optional(),
  filter: memoryFilterParam.optional(),
});

export const CreateAnchorBody = z.strictObject({
  anchor_external_id: anchorExternalId,
  name: text().trim().min(1).max(200).optional(),
  metadata: metadata.optional(),
});

export const ListAnchorsQuery = z.strictObject({
  anchor_external_id: anchorExternalId.optional(),
  anchor_external_id_prefix: anchorExternalId
    .optional()
    .describe('Only subjects whose external id starts with this text (case-sensitive)'),
  limit: limit(50, 200),
  cursor: cursor.optional(),
});

export const PurgeQuery = z.strictObject({
  purge: booleanFlag.optional().describe('Must be true: the erasure cannot be undone'),
});

export const PageQuery = z.strictObject({ limit: limit(50, 200), cursor: cursor.optional() });

/** A list of memories: a page, filtered, optionally of what changed since a time only. */
export const MemoryPageQuery = FilteredPageQuery.extend({
  changed_since: dateTime()
    .optional()
    .describe(
      'Only memories created, reinforced, superseded, corrected, pinned or given an expiry at or after this time (by the audit trail); superseded ones included, marked. Deleted, expired and purged ones are gone: their content-free events are in /v1/audit',
    ),
});

/** A subject's profile: its active memories, or those it superseded. */
export const AnchorProfileQuery = MemoryPageQuery.extend({
  status: z
    .enum(['active', 'superseded'])
    .default('active')
    .describe('active: the profile; superseded: what it replaced, most recently superseded first'),
});

export const CreateSessionBody = z.strictObject({
  agent_id: agentId,
  anchor_external_id: anchorExternalId.optional(),
  anchor_id: uuid.optional(),
  metadata: metadata.optional(),
});

export const WriteCanonBody = z.strictObject({ agent_id: agentId, content, metadata: metadata.optional() });

export const AuditQuery = z.strictObject({
  anchor_id: uuid.optional(),
  memory_id: uuid.optional(),
  action: z.enum(AUDIT_ACTIONS).optional(),
  since: dateTime().optional().describe('Only events at or after this time'),
  limit: limit(50, 200),
  cursor: cursor.optional(),
});

/** The agent of /v1/agents/{id}/…: an agent id, not a UUID. */
export const AgentParams = z.strictObject({ id: agentId });

/** docs/api.md §5: at most this many messages per ingest call. */
export const INGEST_MAX_MESSAGES = 500;

export const ConversationMessageBody = z.strictObject({
  role: z.enum(['user', 'assistant', 'system']),
  content,
  id: text()
    .min(1, 'must not be empty')
    .max(200)
    .optional()
    .describe('Your id of the message; with conversation_id, a message is ingested once'),
  name: text().trim().min(1, 'must not be empty').max(200).optional().describe("The speaker's name"),
  created_at: dateTime().optional().describe('When the message was sent, ISO-8601'),
});

export const IngestBody = z.strictObject({
  messages: z
    .array(ConversationMessageBody)
    .min(1, 'must hold at least one message')
    .max(INGEST_MAX_MESSAGES, `must hold at most ${INGEST_MAX_MESSAGES} messages`)
    .superRefine((messages, ctx) => {
      // An id names one message: twice in one call, one of the two would be dropped unseen.
      const first = new Map<string, number>();
      messages.forEach((m, i) => {
        if (m.id === undefined) return;
        const earlier = first.get(m.id);
        if (earlier === undefined) first.set(m.id, i);
        else ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `repeats the id of messages.${earlier}` });
      });
    }),
  conversation_id: text()
    .min(1, 'must not be empty')
    .max(200)
    .optional()
    .describe('Your id of the conversation: with message ids, a re-sent message is skipped'),
  anchor_external_id: anchorExternalId.optional(),
  anchor_id: uuid.optional(),
  session_id: uuid.optional(),
  metadata: metadata.optional(),
});
