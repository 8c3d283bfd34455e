import { sql, type RawBuilder, type Selectable, type SqlBool } from 'kysely';
import type { z } from 'zod';
import type { Db } from '../../db/connect.js';
import type { AuditEventsTable } from '../../db/schema.js';
import type { AuditEventObject } from '../../schemas/objects.js';
import { boundAgents, keyVisibleTo, memoryVisibleTo } from '../tenancy/agent-binding.js';
import { CHANGES_CHANNEL, encodeChange } from './changes.js';
import type { Actor } from '../core.js';
import { decodeCursor, toPage, type Page } from './pagination.js';
import { isUuid, newId } from '../text.js';
import type { AuditAction } from '../../vocabulary.js';
import { enqueueWebhooks, enqueueWebhooksMany, type OutboxEvent } from '../../db/webhook-outbox.js';

/** Ids, counts, bindings and confidences: never memory content, names or metadata. */
export type AuditChanges = Record<string, string | number | boolean | null | string[]>;

export interface AuditInput {
  action: AuditAction;
  agentId?: string | null;
  memoryId?: string | null;
  anchorId?: string | null;
  sessionId?: string | null;
  changes?: AuditChanges;
}

export type AuditEvent = z.output<typeof AuditEventObject>;

/** An event's row of audit_events. */
function auditRow(actor: Actor, id: string, at: Date, input: AuditInput) {
  return {
    tenant_id: actor.tenantId,
    id,
    at,
    action: input.action,
    memory_id: input.memoryId ?? null,
    anchor_id: input.anchorId ?? null,
    session_id: input.sessionId ?? null,
    actor_key_id: actor.keyId,
    actor_agent_id: input.agentId ?? null,
    changes: JSON.stringify(input.changes ?? {}),
  };
}

/** The same event as the webhook outbox (src/db/webhook-outbox.ts) takes it. */
function outboxEvent(actor: Actor, id: string, at: Date, input: AuditInput): OutboxEvent {
  return {
    tenantId: actor.tenantId,
    id,
    at,
    action: input.action,
    memoryId: input.memoryId ?? null,
    anchorId: input.anchorId ?? null,
    sessionId: input.sessionId ?? null,
    keyId: actor.keyId,
    agentId: input.agentId ?? null,
    changes: input.changes ?? {},
  };
}

/** What the change is announced as (src/domain/records/changes.ts); none for a change of no subject, session or canon. */
function changePayload(actor: Actor, input: AuditInput): string | undefined {
  const canon = input.action === 'canon_written' || input.action === 'canon_deleted';
  if (!input.anchorId && !input.sessionId && !canon) return undefined;
  return encodeChange({
    tenantId: actor.tenantId,
    anchorId: input.anchorId ?? null,
    sessionId: input.sessionId ?? null,
    canon,
  });
}

/**
 * Announced in the mutation's transaction: Postgres delivers it on commit only, to every process
 * listening, so a subscriber never hears of a change it cannot read yet. A statement of its own,
 * not the insert's RETURNING: on Citus that would run on a worker, whose notifications no process
 * hears.
 */
async function announce(trx: Db, payload: string): Promise<void> {
  await sql`SELECT pg_notify(${CHANGES_CHANNEL}, ${payload})`.execute(trx);
}

/** Written inside the transaction of the mutation it records, so one never lands without the other. */
export async function recordEvent(trx: Db, actor: Actor, at: Date, input: AuditInput): Promise<void> {
  const id = newId();
  await trx
    .insertInto('audit_events')
    .values(auditRow(actor, id, at, input))
    .execute();
  // The webhook outbox, in this same transaction: its deliveries exist exactly when the change
  // does, whatever happens to the process after the commit.
  await enqueueWebhooks(trx, outboxEvent(actor, id, at, input));
  const payload = changePayload(actor, input);
  if (payload !== undefined) await announce(trx, payload);
}

/**
 * recordEvent for many events of one actor at once, in their order: one insert of the audit rows,
 * one of their webhook deliveries, and each distinct change announced once (Postgres delivers a
 * transaction's identical notifications once anyway). A batch's stores use it (batch-group.ts).
 */
export async function recordEvents(
  trx: Db,
  actor: Actor,
  events: readonly { at: Date; input: AuditInput }[],
): Promise<void> {
  if (events.length === 0) return;
  const stamped = events.map(({ at, input }) => ({ id: newId(), at, input }));
  await trx
    .insertInto('audit_events')
    .values(stamped.map(({ id, at, input }) => auditRow(actor, id, at, input)))
    .execute();
  await enqueueWebhooksMany(
    trx,
    actor.tenantId,
    stamped.map(({ id, at, input }) => outboxEvent(actor, id, at, input)),
  );
  const payloads = new Set(events.flatMap(({ input }) => changePayload(actor, input) ?? []));
  for (const payload of payloads) await announce(trx, payload);
}

/** An audit event's columns, as every read of the trail selects them (the API, the export). */
export const auditColumns = [
  'id',
  'at',
  'action',
  'memory_id',
  'anchor_id',
  'session_id',
  'actor_key_id',
  'actor_agent_id',
  'changes',
] as const;

type AuditRow = Omit<Selectable<AuditEventsTable>, 'tenant_id'>;

function toEvent(row: AuditRow): AuditEvent {
  return {
    id: row.id,
    at: row.at.toISOString(),
    // The column holds only what recordEvent wrote, an AuditAction.
    action: row.action as AuditAction,
    memory_id: row.memory_id,
    anchor_id: row.anchor_id,
    session_id: row.session_id,
    actor: { key_id: row.actor_key_id, agent_id: row.actor_agent_id },
    changes: row.changes,
  };
}

/**
 * Whether the row of `audit_events` may be shown to a key bound to `agents` (src/domain/tenancy/agent-binding.ts).
 * An event of a memory: not while the memory is another agent's private one; never an event of a
 * private memory whose actor is another agent (or none); and once the memory is deleted, none of
 * its trail if any event of it is such (its events carry its binding and agent), so that a deleted
 * private memory stays another agent's. An event of a key: only when the actor may list that key.
 * An event of a job: only when the actor may see the job (every agent it acted for is the actor's).
 * Every read of the trail for a bound actor applies it: the API, a memory's history, the export.
 */
export function eventVisibleTo(agents: readonly string[]): RawBuilder<SqlBool> {
  const othersPrivate = (e: string) =>
    sql<SqlBool>`(${sql.ref(`${e}.changes`)}->>'binding' = 'private'
      AND (${sql.ref(`${e}.actor_agent_id`)} IS NULL OR ${sql.ref(`${e}.actor_agent_id`)} <> ALL(${agents}::text[])))`;
  return sql<SqlBool>`(CASE
    WHEN audit_events.memory_id IS NOT NULL THEN
      NOT ${othersPrivate('audit_events')}
      AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.tenant_id = audit_events.tenant_id
        AND m.id = audit_events.memory_id AND NOT ${memoryVisibleTo(agents)})
      AND (EXISTS (SELECT 1 FROM memories m WHERE m.tenant_id = audit_events.tenant_id AND m.id = audit_events.memory_id)
        OR NOT EXISTS (SELECT 1 FROM audit_events o WHERE o.tenant_id = audit_events.tenant_id
          AND o.memory_id = audit_events.memory_id AND ${othersPrivate('o')}))
    WHEN audit_events.action = 'job_finished' THEN
      jsonb_typeof(audit_events.changes->'agent_ids') = 'array'
      AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(audit_events.changes->'agent_ids') AS j(agent_id)
        WHERE j.agent_id <> ALL(${agents}::text[]))
    WHEN audit_events.action IN ('key_created', 'key_revoked') THEN
      EXISTS (SELECT 1 FROM api_keys k WHERE k.tenant_id = audit_events.tenant_id
        AND k.id::text = audit_events.changes->>'key_id' AND ${keyVisibleTo(agents)})
    ELSE true END)`;
}

/** A memory's events, oldest first: none when the actor may not see the memory. */
export async function memoryHistory(db: Db, actor: Actor, memoryId: string): Promise<AuditEvent[]> {
  if (!isUuid(memoryId)) return [];
  const agents = boundAgents(actor);
  let query = db
    .selectFrom('audit_events')
    .select([...auditColumns, 'seq'])
    .where('tenant_id', '=', actor.tenantId)
    .where('memory_id', '=', memoryId);
  if (agents) query = query.where(eventVisibleTo(agents));
  const rows = await query.orderBy('seq').execute();
  return rows.map(toEvent);
}

export interface AuditFilter {
  anchorId?: string | undefined;
  memoryId?: string | undefined;
  action?: AuditAction | undefined;
  since?: Date | undefined;
  limit: number;
  cursor?: string | undefined;
}

/**
 * Oldest first, so a cursor can follow the trail as it grows. A bound actor sees only the events
 * eventVisibleTo lets through: a memory filter naming another agent's private memory finds none, as
 * for an id that never existed.
 */
export async function listEvents(db: Db, actor: Actor, filter: AuditFilter): Promise<Page<AuditEvent>> {
  const agents = boundAgents(actor);
  let query = db
    .selectFrom('audit_events')
    .select([...auditColumns, 'seq'])
    .where('tenant_id', '=', actor.tenantId);
  if (agents) query = query.where(eventVisibleTo(agents));
  if (filter.anchorId) query = query.where('anchor_id', '=', filter.anchorId);
  if (filter.memoryId) query = query.where('memory_id', '=', filter.memoryId);
  if (filter.action) query = query.where('action', '=', filter.action);
  if (filter.since) query = query.where('at', '>=', filter.since);
  if (filter.cursor) {
    const [seq] = decodeCursor(filter.cursor, ['number']);
    query = query.where(sql<boolean>`seq > ${seq}`);
  }
  const rows = await query
    .orderBy('seq')
    .limit(filter.limit + 1)
    .execute();
  return toPage(rows, filter.limit, (r) => [r.seq], toEvent);
}
