/**
 * The service's closed word lists, declared once: the domain's types, the zod enums of the API
 * (src/schemas), the filter language, the database's row types and the import records all derive
 * from these. It imports nothing, so that every layer may read it (test/unit/layers.test.ts).
 */

/** Where a memory lives and who sees it (docs/api.md §2): an agent's own, a subject's, a session's, the tenant's canon. */
export const BINDINGS = ['private', 'anchored', 'session', 'canon'] as const;
export type Binding = (typeof BINDINGS)[number];

/** What an API key may do. */
export const SCOPES = ['read', 'write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** What the audit trail records (src/domain/records/audit.ts). */
export const AUDIT_ACTIONS = [
  'created',
  'reinforced',
  'superseded',
  'promoted',
  'merged',
  'corrected',
  'deleted',
  'updated',
  'expired',
  'session_ended',
  'canon_written',
  'canon_deleted',
  'anchor_purged',
  'key_created',
  'key_revoked',
  'job_finished',
  'import_finished',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** The event kinds a webhook endpoint may ask for, dotted; `*` asks for all. Documented in docs/webhooks.md. */
export const WEBHOOK_EVENTS = [
  'memory.created',
  'memory.reinforced',
  'memory.promoted',
  'memory.merged',
  'memory.superseded',
  'memory.corrected',
  'memory.deleted',
  'memory.updated',
  'memory.expired',
  'subject.purged',
  'session.ended',
  'canon.written',
  'canon.deleted',
  'import.finished',
  'job.finished',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/**
 * The one table from audit actions to webhook events: every event is an audit event, written by
 * recordEvent in the transaction of its change, so the outbox row commits (or rolls back) with it.
 * An action not listed here (a key created or revoked) sends nothing. A new audited action becomes
 * an event with one line here and its name in WEBHOOK_EVENTS.
 */
export const EVENT_OF_ACTION: Readonly<Partial<Record<AuditAction, WebhookEvent>>> = {
  created: 'memory.created',
  reinforced: 'memory.reinforced',
  promoted: 'memory.promoted',
  merged: 'memory.merged',
  superseded: 'memory.superseded',
  corrected: 'memory.corrected',
  deleted: 'memory.deleted',
  updated: 'memory.updated',
  expired: 'memory.expired',
  anchor_purged: 'subject.purged',
  session_ended: 'session.ended',
  canon_written: 'canon.written',
  canon_deleted: 'canon.deleted',
  import_finished: 'import.finished',
  job_finished: 'job.finished',
};

/** The kinds of job, as rows and the API name them; each has its JobKind in src/jobs/kinds.ts. */
export const JOB_KIND_NAMES = ['ingest', 'import', 'batch'] as const;
export type JobKindName = (typeof JOB_KIND_NAMES)[number];

export const JOB_STATES = ['queued', 'running', 'succeeded', 'failed'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** Where a recall's read went: a replica, the primary (no replica, or read-your-writes), or the primary after a replica failed. */
export const READ_TARGETS = ['replica', 'primary', 'fallback'] as const;
export type ReadTarget = (typeof READ_TARGETS)[number];
