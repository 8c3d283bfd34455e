import type { AuditAction } from '../domain/audit.js';

/** The event kinds an endpoint may ask for, dotted; `*` asks for all. Documented in docs/webhooks.md. */
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

/** What an endpoint receives: Standard Webhooks' type, timestamp and data. */
export interface WebhookPayload {
  type: WebhookEvent;
  timestamp: string;
  data: {
    event_id: string;
    tenant_id: string;
    memory_id: string | null;
    anchor_id: string | null;
    session_id: string | null;
    /** The agent that acted, as the audit trail names it. */
    agent_id: string | null;
    /** The API key that acted; null for the service itself (the sweeper) and the command line. */
    key_id: string | null;
    /** The audit event's changes: ids, counts, bindings and confidences, never content. */
    changes: Record<string, unknown>;
  };
}
