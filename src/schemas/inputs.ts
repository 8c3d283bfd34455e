import { z } from 'zod';
import { AUDIT_ACTIONS } from '../domain/audit.js';
import { BATCH_MAX_ITEMS } from '../domain/batch.js';
import { SCOPES } from '../domain/core.js';
import {
  agentId,
  anchorExternalId,
  booleanFlag,
  content,
  cursor,
  dateTime,
  limit,
  metadata,
  text,
  uuid,
} from './fields.js';

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

export const StoreMemoryBody = z.strictObject({
  agent_id: agentId,
  content,
  anchor_external_id: anchorExternalId.optional(),
  anchor_id: uuid.optional(),
  session_id: uuid.optional(),
  metadata: metadata.optional(),
});

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

export const CorrectMemoryBody = z.strictObject({
  content: content.describe('The corrected text; a new memory holding it supersedes this one'),
  agent_id: agentId.optional().describe("Who corrects it, for the audit trail; the memory's own agent when left out"),
  metadata: metadata
    .optional()
    .describe("The new memory's metadata; the corrected memory's metadata is carried over when left out"),
});

export const RecallQuery = z.strictObject({
  agent_id: agentId,
  query: text().trim().min(1, 'must not be empty').max(2000).describe('What to look for'),
  anchor_external_id: anchorExternalId.optional(),
  anchor_id: uuid.optional(),
  session_id: uuid.optional(),
  limit: limit(10, 100),
  include_superseded: booleanFlag.default(false),
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
