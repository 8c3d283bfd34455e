import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Actor } from '../domain/core.js';
import { decodeTimeIdCursor, toPage, type Page } from '../domain/records/pagination.js';
import { getEndpoint } from './endpoints.js';

export interface DeliveryView {
  /** The event's id, as sent in webhook-id. */
  event_id: string;
  event_type: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  created_at: string;
  /** For a pending delivery, when it is tried next; null once finished. */
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: string | null;
}

export interface DeliveryFilter {
  status?: 'pending' | 'delivered' | 'failed' | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** An endpoint's deliveries, newest first; never their payloads (the audit trail has the events). */
export async function listDeliveries(
  db: Db,
  actor: Actor,
  endpointId: string,
  filter: DeliveryFilter,
): Promise<Page<DeliveryView>> {
  await getEndpoint(db, actor, endpointId);
  let query = db
    .selectFrom('webhook_deliveries')
    .select([
      'id',
      'event_type',
      'status',
      'attempts',
      'created_at',
      'next_attempt_at',
      'last_attempt_at',
      'last_status_code',
      'last_error',
      'delivered_at',
    ])
    .where('tenant_id', '=', actor.tenantId)
    .where('endpoint_id', '=', endpointId);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.cursor) {
    const [at, id] = decodeTimeIdCursor(filter.cursor);
    query = query.where(sql<boolean>`(created_at, id) < (${at}::timestamptz, ${id}::uuid)`);
  }
  const rows = await query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit + 1)
    .execute();
  return toPage(
    rows,
    filter.limit,
    (r) => [r.created_at.toISOString(), r.id],
    (r) => ({
      event_id: r.id,
      event_type: r.event_type,
      status: r.status,
      attempts: r.attempts,
      created_at: r.created_at.toISOString(),
      next_attempt_at: r.status === 'pending' ? r.next_attempt_at.toISOString() : null,
      last_attempt_at: r.last_attempt_at?.toISOString() ?? null,
      last_status_code: r.last_status_code,
      last_error: r.last_error,
      delivered_at: r.delivered_at?.toISOString() ?? null,
    }),
  );
}
