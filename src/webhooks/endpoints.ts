import { sql, type Selectable } from 'kysely';
import type { Db } from '../db/connect.js';
import type { WebhookEndpointsTable } from '../db/schema.js';
import { boundAgents } from '../domain/tenancy/agent-binding.js';
import type { Actor, Core } from '../domain/core.js';
import { isUuid, newId } from '../domain/text.js';
import { AppError } from '../errors.js';
import { hostOf, RefusedAddressError, resolveDeliveryAddress } from './address.js';
import { WEBHOOKS_CHANNEL } from '../db/webhook-outbox.js';
import { newSecret } from './signature.js';
import type { WebhookEvent } from '../vocabulary.js';

/** A tenant's endpoints are few; a bound on them keeps the outbox's per-event insert small. */
export const ENDPOINTS_PER_TENANT = 50;

export interface EndpointView {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  created_at: string;
  updated_at: string;
  disabled_reason: string | null;
  disabled_at: string | null;
  failing_since: string | null;
  last_success_at: string | null;
}

export interface EndpointInput {
  url: string;
  events: (WebhookEvent | '*')[];
  description?: string | null | undefined;
  enabled?: boolean | undefined;
}

type Row = Selectable<WebhookEndpointsTable>;
const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

const VIEW_COLUMNS = [
  'id',
  'url',
  'events',
  'description',
  'enabled',
  'created_at',
  'updated_at',
  'disabled_reason',
  'disabled_at',
  'failing_since',
  'last_success_at',
] as const;

function toView(row: Omit<Row, 'tenant_id' | 'secret'>): EndpointView {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    disabled_reason: row.disabled_reason,
    disabled_at: iso(row.disabled_at),
    failing_since: iso(row.failing_since),
    last_success_at: iso(row.last_success_at),
  };
}

/**
 * Webhooks report every agent's events, private memories' ids included: a key bound to agents
 * (which must not learn of other agents' private memories) may not manage them.
 */
function assertUnbound(actor: Actor): void {
  if (boundAgents(actor) !== null) {
    throw new AppError(
      'insufficient_scope',
      "webhooks report every agent's events: they are managed with an admin key not bound to agents",
    );
  }
}

/**
 * Refuses a URL the dispatcher would refuse to deliver to, at once, with the field named: a
 * private, loopback or link-local address (or a name resolving only to such) without
 * WEBHOOK_ALLOW_PRIVATE. A name that does not resolve yet is accepted: its deliveries fail and are
 * retried until it does. Every delivery checks again, as a name may be pointed elsewhere later.
 */
async function assertDeliverable(core: Core, url: string): Promise<void> {
  const parsed = new URL(url);
  if (parsed.username || parsed.password) {
    throw new AppError('invalid_request', 'url must not hold credentials', [
      { path: 'url', message: 'must not hold a user name or password: the signature authenticates deliveries' },
    ]);
  }
  try {
    await resolveDeliveryAddress(hostOf(parsed), core.config.webhooks.allowPrivate);
  } catch (error) {
    if (error instanceof RefusedAddressError) {
      throw new AppError('invalid_request', `url: ${error.message}`, [
        {
          path: 'url',
          message: `${error.message}; webhooks go to public addresses only unless WEBHOOK_ALLOW_PRIVATE=true`,
        },
      ]);
    }
    // Not resolvable now: accepted, see above.
  }
}

const notFound = () => new AppError('not_found', 'no such webhook endpoint');

export async function createEndpoint(
  core: Core,
  actor: Actor,
  input: EndpointInput,
): Promise<{ view: EndpointView; secret: string }> {
  assertUnbound(actor);
  await assertDeliverable(core, input.url);
  const secret = newSecret();
  const now = core.clock();
  const view = await core.db.transaction().execute(async (trx) => {
    const { count } = await trx
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('tenant_id', '=', actor.tenantId)
      .executeTakeFirstOrThrow();
    if (Number(count) >= ENDPOINTS_PER_TENANT) {
      throw new AppError('conflict', `a tenant has at most ${ENDPOINTS_PER_TENANT} webhook endpoints`);
    }
    const row = await trx
      .insertInto('webhook_endpoints')
      .values({
        tenant_id: actor.tenantId,
        id: newId(),
        url: input.url,
        events: [...new Set(input.events)],
        description: input.description ?? null,
        enabled: input.enabled ?? true,
        secret,
        created_at: now,
        updated_at: now,
      })
      .returning(VIEW_COLUMNS)
      .executeTakeFirstOrThrow();
    return toView(row);
  });
  return { view, secret };
}

export async function listEndpoints(db: Db, actor: Actor): Promise<EndpointView[]> {
  assertUnbound(actor);
  const rows = await db
    .selectFrom('webhook_endpoints')
    .select(VIEW_COLUMNS)
    .where('tenant_id', '=', actor.tenantId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toView);
}

export async function getEndpoint(db: Db, actor: Actor, id: string): Promise<EndpointView> {
  assertUnbound(actor);
  if (!isUuid(id)) throw notFound();
  const row = await db
    .selectFrom('webhook_endpoints')
    .select(VIEW_COLUMNS)
    .where('tenant_id', '=', actor.tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw notFound();
  return toView(row);
}

/**
 * Changes what is given. Enabling an endpoint (again) clears why it was disabled and its failing
 * streak, and its deliveries still pending resume; a disabled endpoint is sent nothing and
 * queues nothing new.
 */
export async function updateEndpoint(
  core: Core,
  actor: Actor,
  id: string,
  patch: Partial<EndpointInput>,
): Promise<EndpointView> {
  assertUnbound(actor);
  if (!isUuid(id)) throw notFound();
  if (patch.url !== undefined) await assertDeliverable(core, patch.url);
  const now = core.clock();
  const row = await core.db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('webhook_endpoints')
      .set({
        updated_at: now,
        ...(patch.url !== undefined ? { url: patch.url } : {}),
        ...(patch.events !== undefined ? { events: [...new Set(patch.events)] } : {}),
        ...(patch.description !== undefined ? { description: patch.description } : {}),
        ...(patch.enabled === true
          ? { enabled: true, disabled_reason: null, disabled_at: null, failing_since: null }
          : {}),
        ...(patch.enabled === false ? { enabled: false, disabled_reason: null, disabled_at: now } : {}),
      })
      .where('tenant_id', '=', actor.tenantId)
      .where('id', '=', id)
      .returning(VIEW_COLUMNS)
      .executeTakeFirst();
    if (updated && patch.enabled === true) {
      // What waited out the outage is tried now, not at the end of its backoff.
      await trx
        .updateTable('webhook_deliveries')
        .set({ next_attempt_at: now })
        .where('tenant_id', '=', actor.tenantId)
        .where('endpoint_id', '=', id)
        .where('status', '=', 'pending')
        .execute();
      await sql`SELECT pg_notify(${WEBHOOKS_CHANNEL}, '')`.execute(trx);
    }
    return updated;
  });
  if (!row) throw notFound();
  return toView(row);
}

/** Deletes the endpoint and its deliveries, pending ones included. */
export async function deleteEndpoint(core: Core, actor: Actor, id: string): Promise<void> {
  assertUnbound(actor);
  if (!isUuid(id)) throw notFound();
  const result = await core.db
    .deleteFrom('webhook_endpoints')
    .where('tenant_id', '=', actor.tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) throw notFound();
}
