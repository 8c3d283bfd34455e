import { AppError } from '../errors.js';
import type { Actor } from './core.js';

/**
 * Keys bound to agents. A key created with `agent_ids` acts only as those agents: naming another
 * is refused (403), and another agent's private memories do not exist for it (404, and absent from
 * every list). A key without the list acts as any agent of its tenant.
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

/** False for another agent's private memory when the actor is bound: it must not learn it exists. */
export function canSeeMemory(actor: Actor, memory: { binding: string; agent_id: string }): boolean {
  return memory.binding !== 'private' || !isBound(actor) || actor.agentIds.has(memory.agent_id);
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
