import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { AppError } from '../../errors.js';
import type { Actor } from '../core.js';

/**
 * Keys bound to agents. A key created with `agent_ids` acts only as those agents: naming another
 * is refused (403), and another agent's private memories do not exist for it (404, and absent from
 * every list, export and audit trail), nor do keys bound beyond its agents. A key without the list
 * acts as any agent of its tenant.
 */

const isBound = (actor: Actor): actor is Actor & { agentIds: ReadonlySet<string> } =>
  actor.agentIds !== undefined && actor.agentIds !== null;

/**
 * The agent id an action names, once the actor may act as it. Every domain entry point that takes
 * an agent id calls this first, whichever transport the id came from.
 */
export function actAs(actor: Actor, agentId: string): string {
  if (isBound(actor) && !actor.agentIds.has(agentId)) {
    throw new AppError(
      'insufficient_scope',
      `this key may act only as the agents it is bound to, and agent "${agentId}" is not one of them`,
    );
  }
  return agentId;
}

/** The agent a key bound to exactly one agent acts as when the caller names none. */
export function soleAgent(actor: Actor): string | undefined {
  if (!isBound(actor) || actor.agentIds.size !== 1) return undefined;
  return actor.agentIds.values().next().value;
}

/** The agents of a bound actor, or null for one that acts as any agent. */
export function boundAgents(actor: Pick<Actor, 'agentIds'>): string[] | null {
  return actor.agentIds === undefined || actor.agentIds === null ? null : [...actor.agentIds];
}

/** False for another agent's private memory when the actor is bound: it must not learn it exists. */
export function canSeeMemory(actor: Actor, memory: { binding: string; agent_id: string }): boolean {
  return memory.binding !== 'private' || !isBound(actor) || actor.agentIds.has(memory.agent_id);
}

/** canSeeMemory as SQL on a memories row `m`, for the agents of a bound actor. */
export function memoryVisibleTo(agents: readonly string[]): RawBuilder<SqlBool> {
  return sql<SqlBool>`(m.binding <> 'private' OR m.agent_id = ANY(${agents}::text[]))`;
}

/**
 * False for a key a bound actor may not list or revoke: an unbound key, or one bound to an agent
 * outside the actor's. Otherwise a key bound to agent A could revoke the keys that act as
 * everyone, and leave the tenant with no key able to make an unbound one.
 */
export function canSeeKey(actor: Actor, key: { agent_ids: readonly string[] | null }): boolean {
  if (!isBound(actor)) return true;
  return key.agent_ids !== null && key.agent_ids.every((agentId) => actor.agentIds.has(agentId));
}

/** canSeeKey as SQL on an api_keys row `k`, for the agents of a bound actor. */
export function keyVisibleTo(agents: readonly string[]): RawBuilder<SqlBool> {
  return sql<SqlBool>`(k.agent_ids IS NOT NULL AND k.agent_ids <@ ${agents}::text[])`;
}

/**
 * The agents a key created by this actor may be bound to. A bound actor (an admin key bound to
 * agents) may only hand out keys bound to some of its own agents, or it could mint its way out.
 */
export function assertCanGrant(actor: Actor, agentIds: readonly string[] | null): void {
  if (!isBound(actor)) return;
  if (agentIds === null) {
    throw new AppError(
      'insufficient_scope',
      'a key bound to agents can only create keys bound to some of its agents: send agent_ids',
    );
  }
  for (const agentId of agentIds) actAs(actor, agentId);
}
