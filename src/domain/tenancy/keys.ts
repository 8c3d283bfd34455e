import { createHash, randomInt } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { z } from 'zod';
import type { Db } from '../../db/connect.js';
import type { ApiKeysTable } from '../../db/schema.js';
import { AppError, notFound } from '../../errors.js';
import type { KeyObject } from '../../schemas/objects.js';
import { assertCanGrant, canSeeKey } from './agent-binding.js';
import { recordEvent } from '../records/audit.js';
import { type Actor, type Core } from '../core.js';
import { isUuid, newId } from '../text.js';
import { SCOPES, type Scope } from '../../vocabulary.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
// 40 base62 characters carry 238 bits: well past guessing, and enough that SHA-256 suffices.
const KEY_BODY_LENGTH = 40;
const PREFIX_LENGTH = 12;

export function generateApiKey(admin: boolean): string {
  let body = '';
  for (let i = 0; i < KEY_BODY_LENGTH; i++) body += BASE62[randomInt(BASE62.length)];
  return `${admin ? 'mk_' : 'rk_'}${body}`;
}

export const hashApiKey = (key: string): Buffer => createHash('sha256').update(key, 'utf8').digest();

const KEY_SHAPE = /^(mk|rk)_[0-9A-Za-z]{40,}$/;

/** The public part of a well-formed key (as listed by GET /v1/keys), or null for anything else. */
export const keyPrefixOf = (rawKey: string): string | null =>
  KEY_SHAPE.test(rawKey) ? rawKey.slice(0, PREFIX_LENGTH) : null;

export type ApiKeyView = z.output<typeof KeyObject>;

type KeyRow = Pick<Selectable<ApiKeysTable>, (typeof KEY_COLUMNS)[number]>;

const KEY_COLUMNS = [
  'id',
  'name',
  'key_prefix',
  'scopes',
  'created_at',
  'last_used_at',
  'revoked_at',
  'agent_ids',
] as const;

const toView = (r: KeyRow): ApiKeyView => ({
  id: r.id,
  name: r.name,
  key_prefix: r.key_prefix,
  scopes: r.scopes.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s)),
  created_at: r.created_at.toISOString(),
  last_used_at: r.last_used_at?.toISOString() ?? null,
  revoked_at: r.revoked_at?.toISOString() ?? null,
  agent_ids: r.agent_ids,
});

/** Inserts a key row in the caller's transaction; the plaintext is returned once and never stored. */
export async function insertKey(
  trx: Db,
  tenantId: string,
  now: Date,
  name: string,
  scopes: readonly Scope[],
  agentIds: readonly string[] | null = null,
): Promise<{ view: ApiKeyView; apiKey: string }> {
  const ordered = SCOPES.filter((s) => scopes.includes(s));
  const apiKey = generateApiKey(ordered.includes('admin'));
  const keyHash = hashApiKey(apiKey);
  await trx.insertInto('api_key_tenants').values({ key_hash: keyHash, tenant_id: tenantId }).execute();
  const row = await trx
    .insertInto('api_keys')
    .values({
      tenant_id: tenantId,
      id: newId(),
      name,
      key_prefix: apiKey.slice(0, PREFIX_LENGTH),
      key_hash: keyHash,
      scopes: ordered,
      // Each agent once, in the order given.
      agent_ids: agentIds === null ? null : [...new Set(agentIds)],
      created_at: now,
    })
    .returning(KEY_COLUMNS)
    .executeTakeFirstOrThrow();
  return { view: toView(row), apiKey };
}

export async function createKey(
  core: Core,
  actor: Actor,
  name: string,
  scopes: readonly Scope[],
  agentIds: readonly string[] | null = null,
): Promise<{ view: ApiKeyView; apiKey: string }> {
  assertCanGrant(actor, agentIds);
  return core.db.transaction().execute(async (trx) => {
    const created = await insertKey(trx, actor.tenantId, core.clock(), name, scopes, agentIds);
    const bound = created.view.agent_ids;
    await recordEvent(trx, actor, core.clock(), {
      action: 'key_created',
      changes: { key_id: created.view.id, scopes: created.view.scopes, ...(bound ? { agent_ids: bound } : {}) },
    });
    return created;
  });
}

/** The tenant's keys the actor may see: a bound actor, only those bound to some of its agents. */
/**
 * The ids among these actors' keys that are not revoked: what a long-lived session (MCP over HTTP)
 * checks now and then, since it authenticated once.
 */
export async function liveKeyIds(db: Db, actors: readonly Actor[]): Promise<Set<string>> {
  const keyed = actors.filter((a) => a.keyId !== null);
  if (keyed.length === 0) return new Set();
  const live = await db
    .selectFrom('api_keys')
    .select('id')
    .where('tenant_id', 'in', [...new Set(keyed.map((a) => a.tenantId))])
    .where('id', 'in', [...new Set(keyed.map((a) => a.keyId ?? ''))])
    .where('revoked_at', 'is', null)
    .execute();
  return new Set(live.map((k) => k.id));
}

export async function listKeys(db: Db, actor: Actor): Promise<ApiKeyView[]> {
  const rows = await db
    .selectFrom('api_keys')
    .select(KEY_COLUMNS)
    .where('tenant_id', '=', actor.tenantId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.filter((r) => canSeeKey(actor, r)).map(toView);
}

/** The caller's own key, for a client (the console) to learn what it may do before it tries. */
export async function getKey(db: Db, tenantId: string, keyId: string): Promise<ApiKeyView> {
  if (!isUuid(keyId)) throw notFound('key');
  const row = await db
    .selectFrom('api_keys')
    .select(KEY_COLUMNS)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', keyId)
    .executeTakeFirst();
  if (!row) throw notFound('key');
  return toView(row);
}

/**
 * Revokes a key the actor may see (a bound actor: a key bound to some of its agents; any other is
 * answered as missing). The tenant always keeps an admin key, and an unbound one while it has one:
 * without it no key could create an unbound key again.
 */
export async function revokeKey(core: Core, actor: Actor, keyId: string): Promise<void> {
  await core.db.transaction().execute(async (trx) => {
    // Lock the tenant's keys so two concurrent revocations cannot both remove "the other" admin.
    const keys = await trx
      .selectFrom('api_keys')
      .select(['id', 'scopes', 'revoked_at', 'agent_ids'])
      .where('tenant_id', '=', actor.tenantId)
      .forUpdate()
      .execute();
    const key = keys.find((k) => k.id === keyId);
    if (!key || !canSeeKey(actor, key)) throw notFound('key');
    if (key.revoked_at) return;
    const admins = keys.filter((k) => k.id !== keyId && !k.revoked_at && k.scopes.includes('admin'));
    if (key.scopes.includes('admin') && admins.length === 0) {
      throw new AppError('conflict', "cannot revoke the tenant's last admin key; create another admin key first");
    }
    if (key.scopes.includes('admin') && key.agent_ids === null && !admins.some((k) => k.agent_ids === null)) {
      throw new AppError(
        'conflict',
        "cannot revoke the tenant's last admin key not bound to agents; create another one without agent_ids first",
      );
    }
    await trx
      .updateTable('api_keys')
      .set({ revoked_at: core.clock() })
      .where('tenant_id', '=', actor.tenantId)
      .where('id', '=', keyId)
      .execute();
    await recordEvent(trx, actor, core.clock(), { action: 'key_revoked', changes: { key_id: keyId } });
  });
  // After the commit: a request between clearing and committing would cache the key again.
  keyCache(core.db).clear();
}

/**
 * Keys found valid, by hash, for a few seconds: a lookup per request was one statement of the six a
 * recall runs. A revocation clears the cache of the process that made it, so it holds there at once;
 * other processes on the same database (replicas) refuse the key once their entry expires.
 */
export const KEY_CACHE_MS = 5_000;
const KEY_CACHE_MAX = 10_000;
interface CachedKey {
  actor: Actor;
  expiresAt: number;
}
const keyCaches = new WeakMap<Db, Map<string, CachedKey>>();

function keyCache(db: Db): Map<string, CachedKey> {
  let cache = keyCaches.get(db);
  if (!cache) keyCaches.set(db, (cache = new Map<string, CachedKey>()));
  return cache;
}

/** Forgets the keys this process found valid: after a change that ends keys without revoking them (a tenant's deletion). */
export function forgetCachedKeys(db: Db): void {
  keyCache(db).clear();
}

/** Resolves a bearer key to its actor, or null when it is malformed, unknown or revoked. */
export async function authenticate(core: Core, rawKey: string): Promise<Actor | null> {
  if (!KEY_SHAPE.test(rawKey)) return null;
  const hash = hashApiKey(rawKey);
  const entry = hash.toString('base64');
  const cache = keyCache(core.db);
  const cached = cache.get(entry);
  if (cached && cached.expiresAt > performance.now()) return cached.actor;
  cache.delete(entry);
  const actor = await lookUpKey(core, hash);
  if (actor) {
    // Oldest first out: a Map iterates in insertion order.
    if (cache.size >= KEY_CACHE_MAX) cache.delete(cache.keys().next().value as string);
    cache.set(entry, { actor, expiresAt: performance.now() + KEY_CACHE_MS });
  }
  return actor;
}

/**
 * Two statements, not a join: the tenant first (api_key_tenants, a reference table on Citus, read on
 * the node that asks), then the key among that tenant's rows only. With the tenant as a value, Citus
 * sends the second to the tenant's shard; a join or a subquery would ask every shard.
 */
async function lookUpKey(core: Core, hash: Buffer): Promise<Actor | null> {
  const owner = await core.db
    .selectFrom('api_key_tenants')
    .select('tenant_id')
    .where('key_hash', '=', hash)
    .executeTakeFirst();
  if (!owner) return null;
  const row = await core.db
    .selectFrom('api_keys')
    .select(['tenant_id', 'id', 'scopes', 'last_used_at', 'agent_ids'])
    .where('tenant_id', '=', owner.tenant_id)
    .where('key_hash', '=', hash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row) return null;
  const now = core.clock();
  // Recording use at most once a minute keeps authentication from writing on every request.
  if (!row.last_used_at || now.getTime() - row.last_used_at.getTime() > 60_000) {
    await core.db
      .updateTable('api_keys')
      .set({ last_used_at: now })
      .where('tenant_id', '=', row.tenant_id)
      .where('id', '=', row.id)
      .execute();
  }
  return {
    tenantId: row.tenant_id,
    keyId: row.id,
    scopes: new Set(row.scopes.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s))),
    agentIds: row.agent_ids === null ? null : new Set(row.agent_ids),
  };
}
