import { z } from 'zod';
import { agentId, anchorExternalId, metadata, text, uuid } from '../schemas/fields.js';
import { AUDIT_ACTIONS, BINDINGS } from '../vocabulary.js';

/**
 * The records of our own export format (NDJSON, one typed record a line), as the exporter writes
 * them and the importer validates them. docs/portability.md describes each field.
 */

export const EXPORT_FORMAT = 'agent-memory-export';
export const EXPORT_VERSION = 1;

/** A time exactly as Date#toISOString writes it (milliseconds, UTC), so an import re-exports byte-identical. */
const time = z.iso.datetime({
  offset: false,
  precision: 3,
  message: 'must be an ISO-8601 time in UTC with milliseconds',
});
/**
 * Ranges the service itself writes, so that an imported row behaves as one it made. Confidence
 * starts above 0 (INITIAL_CONFIDENCE) and only rises towards 1. A reinforcement count is a store
 * per count: a billion leaves the 32-bit column room for the next stores, even when two such
 * memories merge (a session copy into its subject's profile adds its own count).
 */
const confidence = z.number().gt(0).max(1);
export const REINFORCEMENT_COUNT_MAX = 1_000_000_000;

export const HeaderRecord = z.object({
  type: z.literal('header'),
  format: z.literal(EXPORT_FORMAT),
  version: z.literal(EXPORT_VERSION),
  /** The embedder of the exporting database: informative, as the export carries no vectors. */
  embedder: text().max(200),
});

export const AnchorRecord = z.object({
  type: z.literal('anchor'),
  id: uuid,
  anchor_external_id: anchorExternalId,
  name: text().max(1000).nullable(),
  metadata,
  created_at: time,
});

export const SessionRecord = z.object({
  type: z.literal('session'),
  id: uuid,
  agent_id: agentId,
  anchor_id: uuid.nullable(),
  status: z.enum(['active', 'ended']),
  metadata,
  started_at: time,
  ended_at: time.nullable(),
  expires_at: time.nullable(),
});

const memoryRecordShape = {
  id: uuid,
  agent_id: agentId,
  content: text().refine((s) => s.trim().length > 0, 'must not be empty'),
  status: z.enum(['active', 'superseded']),
  confidence,
  decay_rate: z.number().min(0),
  reinforcement_count: z.number().int().min(0).max(REINFORCEMENT_COUNT_MAX),
  superseded_by: uuid.nullable(),
  metadata,
  created_at: time,
  updated_at: time,
  last_reinforced_at: time,
  // Files exported before these fields existed still import: a memory then happened when it was
  // stored, was superseded at its last update, never expires and is not pinned.
  occurred_at: time.optional(),
  superseded_at: time.nullable().optional(),
  expires_at: time.nullable().optional(),
  pinned: z.boolean().optional(),
};

export const MemoryRecord = z
  .object({
    type: z.literal('memory'),
    ...memoryRecordShape,
    binding: z.enum(BINDINGS).exclude(['canon']),
    anchor_id: uuid.nullable(),
    session_id: uuid.nullable(),
    /** Later sessions of the subject that stored this session memory again (docs/api.md §6). */
    mentioned_in_sessions: z.array(uuid).max(10_000),
  })
  .superRefine((m, ctx) => {
    // The database's own CHECKs, answered as a 400 naming the field rather than a driver error.
    if (m.binding === 'anchored' && m.anchor_id === null)
      ctx.addIssue({ code: 'custom', path: ['anchor_id'], message: 'an anchored memory needs its anchor_id' });
    if (m.binding === 'session' && m.session_id === null)
      ctx.addIssue({ code: 'custom', path: ['session_id'], message: 'a session memory needs its session_id' });
    if (m.binding === 'private' && (m.anchor_id !== null || m.session_id !== null))
      ctx.addIssue({ code: 'custom', path: ['binding'], message: 'a private memory has no anchor_id or session_id' });
  });

export const CanonRecord = z.object({ type: z.literal('canon'), ...memoryRecordShape });

export const AuditRecord = z.object({
  type: z.literal('audit'),
  id: uuid,
  at: time,
  // A string checked against the list, so that the exporter can write the column as it reads it.
  action: text().refine((a) => (AUDIT_ACTIONS as readonly string[]).includes(a), {
    message: `must be one of ${AUDIT_ACTIONS.join(', ')}`,
  }),
  memory_id: uuid.nullable(),
  anchor_id: uuid.nullable(),
  session_id: uuid.nullable(),
  actor: z.object({ key_id: uuid.nullable(), agent_id: text().max(200).nullable() }),
  changes: metadata,
});

export const EndRecord = z.object({
  type: z.literal('end'),
  counts: z.record(z.string(), z.number().int().min(0)),
});

export const ExportRecord = z.discriminatedUnion('type', [
  HeaderRecord,
  AnchorRecord,
  SessionRecord,
  MemoryRecord,
  CanonRecord,
  AuditRecord,
  EndRecord,
]);

export type HeaderRecord = z.output<typeof HeaderRecord>;
export type AnchorRecord = z.output<typeof AnchorRecord>;
export type SessionRecord = z.output<typeof SessionRecord>;
export type MemoryRecord = z.output<typeof MemoryRecord>;
export type CanonRecord = z.output<typeof CanonRecord>;
export type AuditRecord = z.output<typeof AuditRecord>;
export type EndRecord = z.output<typeof EndRecord>;
export type ExportRecord = z.output<typeof ExportRecord>;

/** The records that write rows; header and end only frame the file. */
export type DataRecord = AnchorRecord | SessionRecord | MemoryRecord | CanonRecord | AuditRecord;
