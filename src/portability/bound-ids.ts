import type { Db } from '../db/connect.js';
import { actAs, canSeeMemory } from '../domain/tenancy/agent-binding.js';
import type { Actor } from '../domain/core.js';
import { AppError } from '../errors.js';
import { nameId } from './foreign-ids.js';
import type { AuditRecord, DataRecord } from './records.js';

/**
 * The ids a key bound to agents imports under. Such a key must not learn whether an id is another
 * agent's private memory (or that agent's audit event): were a record's id kept when free, a
 * record whose id another agent holds would answer differently, in the counts or in a later
 * `GET /v1/memories/{id}`. So a bound key keeps a file's id only for a row it can see already
 * (the record is then `existing`, as for any key); every other id becomes one derived from the
 * tenant, the key's agents and the file's id (a UUID v5 layout), the same on every import, so
 * importing a file twice still changes nothing, and every reference to the id in the file
 * (`superseded_by`, an audit event's `memory_id`) follows it. Should a derived id be taken by a
 * row the key cannot see (only a file crafted by an unbound key can do that), the next derivation
 * is tried, so the answer never depends on that row either.
 */

/** Derivations tried before giving up: each further one needs a row planted at the one before. */
const MAX_DERIVATIONS = 8;

type Kind = 'memory' | 'audit';

export interface IdMap {
  memory(id: string): string;
  memory(id: string | null): string | null;
  audit(id: string): string;
}

const IDENTITY: IdMap = {
  memory: ((id: string | null) => id) as IdMap['memory'],
  audit: (id) => id,
};

/** What a bound key may import as an audit event: its agents' events, or its own, never another key's. */
export function assertOwnAuditEvent(actor: Actor, r: AuditRecord): void {
  if (!actor.agentIds) return;
  if (r.actor.key_id !== null && r.actor.key_id !== actor.keyId)
    throw new AppError(
      'insufficient_scope',
      'a key bound to agents imports only audit events of its own agents, and this one names another key',
      [{ path: 'actor.key_id', message: 'must be null or this key' }],
    );
  if (r.actor.agent_id !== null) {
    actAs(actor, r.actor.agent_id);
    return;
  }
  if (r.actor.key_id === null)
    throw new AppError(
      'insufficient_scope',
      'a key bound to agents imports only audit events of its own agents or of itself: this one names neither',
      [{ path: 'actor', message: 'must name one of this key’s agents, or this key' }],
    );
}

/** Whether the bound actor sees a row of that id: another agent's private memory or event it does not. */
async function visibility(db: Db, actor: Actor, kind: Kind, ids: string[]): Promise<Map<string, boolean>> {
  const seen = new Map<string, boolean>();
  if (ids.length === 0) return seen;
  if (kind === 'memory') {
    const rows = await db
      .selectFrom('memories')
      .select(['id', 'binding', 'agent_id'])
      .where('tenant_id', '=', actor.tenantId)
      .where('id', 'in', ids)
      .execute();
    for (const r of rows) seen.set(r.id, canSeeMemory(actor, r));
    return seen;
  }
  const rows = await db
    .selectFrom('audit_events')
    .select(['id', 'actor_key_id', 'actor_agent_id'])
    .where('tenant_id', '=', actor.tenantId)
    .where('id', 'in', ids)
    .execute();
  for (const r of rows) {
    const own =
      r.actor_agent_id !== null
        ? (actor.agentIds?.has(r.actor_agent_id) ?? true)
        : r.actor_key_id !== null && r.actor_key_id === actor.keyId;
    seen.set(r.id, own);
  }
  return seen;
}

/** The ids of a batch's records, as the actor imports them; unbound keys keep every id. */
export async function importIds(db: Db, actor: Actor, records: DataRecord[]): Promise<IdMap> {
  const agents = actor.agentIds;
  if (!agents) return IDENTITY;
  const scope = [...agents].sort().join('\u0000');
  const derive = (id: string) => nameId('bound-import', actor.tenantId, scope, id);

  const wanted: Record<Kind, Set<string>> = { memory: new Set(), audit: new Set() };
  for (const r of records) {
    if (r.type === 'memory' || r.type === 'canon') {
      wanted.memory.add(r.id);
      if (r.superseded_by) wanted.memory.add(r.superseded_by);
    }
    if (r.type === 'audit') {
      wanted.audit.add(r.id);
      if (r.memory_id) wanted.memory.add(r.memory_id);
    }
  }

  const resolved: Record<Kind, Map<string, string>> = { memory: new Map(), audit: new Map() };
  for (const kind of ['memory', 'audit'] as const) {
    // The file's own id stands only for a row the actor sees; anything else is derived.
    const own = await visibility(db, actor, kind, [...wanted[kind]]);
    let pending = new Map<string, string>();
    for (const id of wanted[kind]) {
      if (own.get(id) === true) resolved[kind].set(id, id);
      else pending.set(id, derive(id));
    }
    for (let round = 0; pending.size > 0; round++) {
      if (round === MAX_DERIVATIONS) throw new AppError('conflict', 'it collides with a record of the tenant');
      const seen = await visibility(db, actor, kind, [...pending.values()]);
      const next = new Map<string, string>();
      for (const [id, candidate] of pending) {
        // Free, or the actor's own (an earlier import of the same file): that is its id.
        if (seen.get(candidate) !== false) resolved[kind].set(id, candidate);
        else next.set(id, derive(candidate));
      }
      pending = next;
    }
  }
  const lookup = (kind: Kind) => (id: string) => resolved[kind].get(id) ?? id;
  return {
    memory: ((id: string | null) => (id === null ? null : lookup('memory')(id))) as IdMap['memory'],
    audit: lookup('audit'),
  };
}

/** The records with the ids the actor imports them under. */
export function withIds(records: DataRecord[], ids: IdMap): DataRecord[] {
  if (ids === IDENTITY) return records;
  return records.map((r) => {
    switch (r.type) {
      case 'memory':
      case 'canon':
        return { ...r, id: ids.memory(r.id), superseded_by: ids.memory(r.superseded_by) };
      case 'audit':
        return { ...r, id: ids.audit(r.id), memory_id: ids.memory(r.memory_id) };
      default:
        return r;
    }
  });
}
