import { z } from 'zod';
import { AUDIT_ACTIONS } from '../domain/audit.js';
import { SCOPES } from '../domain/core.js';
import { agentId, anchorExternalId, booleanFlag, content, cursor, limit, metadata, text, uuid } from './fields.js';

export const SetupBody = z.object({ org_name: text().trim().min(1, 'must not be empty').max(200) });

export const CreateKeyBody = z.object({
  name: text().trim().min(1, 'must not be empty').max(200),
  scopes: z
    .array(z.enum(SCOPES))
    .min(1, 'must name at least one scope')
    .default(['read', 'write'])
    .describe('read, write, admin; a key with admin is an mk_ key'),
});

export const IdParams = z.object({ id: z.string() });

export const StoreMemoryBody = z.object({
  agent_id: agentId,
  content,
  anchor_external_id: anchorExternalId.optional(),
  anchor_id: uuid.optional(),
  session_id: uuid.optional(),
  metadata: metadata.optional(),
});

export const RecallQuery = z.object({
  agent_id: agentId,
  query: text().trim().min(1, 'must not be empty').max(2000).describe('What to look for'),
  anchor_external_id: anchorExternalId.optional(),
  anchor_id: uuid.optional(),
  session_id: uuid.optional(),
  limit: limit(10, 100),
  include_superseded: booleanFlag.default(false),
});

export const CreateAnchorBody = z.object({
  anchor_external_id: anchorExternalId,
  name: text().trim().min(1).max(200).optional(),
  metadata: metadata.optional(),
});

export const ListAnchorsQuery = z.object({
  anchor_external_id: anchorExternalId.optional(),
  limit: limit(50, 200),
  cursor: cursor.optional(),
});

export const PageQuery = z.object({ limit: limit(50, 200), cursor: cursor.optional() });

export const CreateSessionBody = z.object({
  agent_id: agentId,
  anchor_external_id: anchorExternalId.optional(),
  anchor_id: uuid.optional(),
  metadata: metadata.optional(),
});

export const WriteCanonBody = z.object({ agent_id: agentId, content, metadata: metadata.optional() });

export const AuditQuery = z.object({
  anchor_id: uuid.optional(),
  memory_id: uuid.optional(),
  action: z.enum(AUDIT_ACTIONS).optional(),
  since: z.iso.datetime({ offset: true }).optional().describe('Only events at or after this time'),
  limit: limit(50, 200),
  cursor: cursor.optional(),
});
