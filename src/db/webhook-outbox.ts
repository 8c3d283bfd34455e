import { sql } from 'kysely';
import { EVENT_OF_ACTION, type AuditAction, type WebhookEvent } from '../vocabulary.js';
import type { Db } from './connect.js';

/** The NOTIFY channel that wakes the dispatchers once an outbox row commits. */
export const WEBHOOKS_CHANNEL = 'agent_memory_webhooks';

export interface OutboxEvent {
  tenantId: string;
  /** The audit event's id: the webhook's id, for receivers to deduplicate by. */
  id: string;
  at: Date;
  action: AuditAction;
  memoryId: string | null;
  anchorId: string | null;
  sessionId: string | null;
  keyId: string | null;
  agentId: string | null;
  /** The audit event's changes: ids, counts, bindings and confidences, never content. */
  changes: Record<string, unknown>;
}

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

/**
 * Queues the event for every enabled endpoint of the tenant that asks for its kind, in `trx`, the
 * transaction of the change it reports: it commits with the change or not at all. One statement
 * that finds no endpoint (an index probe of the tenant's few) is all a tenant without webhooks pays.
 */
export async function enqueueWebhooks(trx: Db, event: OutboxEvent): Promise<void> {
  const type = EVENT_OF_ACTION[event.action];
  if (type === undefined) return;
  const { rows } = await sql<{ endpoint_id: string }>`
    INSERT INTO webhook_deliveries (tenant_id, endpoint_id, id, event_type, payload, created_at, next_attempt_at)
    SELECT e.tenant_id, e.id, ${event.id}, ${type}, ${JSON.stringify(payloadOf(event, type))}::jsonb, ${event.at}, ${event.at}
    FROM webhook_endpoints e
    WHERE e.tenant_id = ${event.tenantId} AND e.enabled AND e.events && ARRAY[${type}, '*']::text[]
    RETURNING endpoint_id`.execute(trx);
  // Heard on commit only, by every process's dispatcher; a statement of its own for Citus, where
  // the insert runs on a worker whose notifications no process hears.
  if (rows.length > 0) await sql`SELECT pg_notify(${WEBHOOKS_CHANNEL}, '')`.execute(trx);
}

/**
 * enqueueWebhooks for many events of one tenant in one statement (a batch's stores: batch-group.ts),
 * with the same deliveries.
 */
export async function enqueueWebhooksMany(trx: Db, tenantId: string, events: readonly OutboxEvent[]): Promise<void> {
  const sent = events.flatMap((event) => {
    const type = EVENT_OF_ACTION[event.action];
    return type === undefined ? [] : [{ event, type }];
  });
  if (sent.length === 0) return;
  const { rows } = await sql<{ endpoint_id: string }>`
    INSERT INTO webhook_deliveries (tenant_id, endpoint_id, id, event_type, payload, created_at, next_attempt_at)
    SELECT e.tenant_id, e.id, v.id, v.type, v.payload::jsonb, v.at, v.at
    FROM unnest(${sent.map((s) => s.event.id)}::uuid[], ${sent.map((s) => s.type)}::text[],
      ${sent.map((s) => JSON.stringify(payloadOf(s.event, s.type)))}::text[],
      ${sent.map((s) => s.event.at.toISOString())}::timestamptz[]) WITH ORDINALITY AS v(id, type, payload, at, n)
    JOIN webhook_endpoints e
      ON e.tenant_id = ${tenantId} AND e.enabled AND e.events && ARRAY[v.type, '*']::text[]
    ORDER BY v.n
    RETURNING endpoint_id`.execute(trx);
  if (rows.length > 0) await sql`SELECT pg_notify(${WEBHOOKS_CHANNEL}, '')`.execute(trx);
}

function payloadOf(event: OutboxEvent, type: WebhookEvent): WebhookPayload {
  return {
    type,
    timestamp: event.at.toISOString(),
    data: {
      event_id: event.id,
      tenant_id: event.tenantId,
      memory_id: event.memoryId,
      anchor_id: event.anchorId,
      session_id: event.sessionId,
      agent_id: event.agentId,
      key_id: event.keyId,
      changes: event.changes,
    },
  };
}
