import { sql } from 'kysely';

/**
 * The units a recall's scope is made of, whose counters migration 0006 keeps by trigger: reading a
 * scope's statistics costs one index probe per unit, whatever its size (the scope read,
 * src/retrieval/queries/scope-read.ts, and the lookup statement, src/retrieval/queries/candidates.ts, read them).
 */

/**
 * One unit of a scope, in the form memory_stats_unit (migration 0006) builds it. An anchored unit
 * without an anchor id (NAMED_SUBJECT) is the subject the scope read resolves itself
 * (src/retrieval/queries/scope-read.ts), and empty in any other statement.
 */
export type ScopeUnit =
  | { binding: 'private'; agentId: string }
  | { binding: 'anchored'; anchorId: string | null }
  | { binding: 'session'; sessionId: string }
  | { binding: 'canon' };

/** The anchored unit of the subject that the scope read resolves (src/retrieval/queries/scope-read.ts). */
export const NAMED_SUBJECT: ScopeUnit = { binding: 'anchored', anchorId: null };

/** The units as four parallel arrays, the arguments of memory_stats_unit, so that any number of them is one parameter each. */
export function unitColumns(units: readonly ScopeUnit[]) {
  return {
    binding: units.map((u) => u.binding),
    agent: units.map((u) => (u.binding === 'private' ? u.agentId : '')),
    anchor: units.map((u) => (u.binding === 'anchored' ? u.anchorId : null)),
    session: units.map((u) => (u.binding === 'session' ? u.sessionId : null)),
  };
}

/**
 * The units' keys as a text[], computed by the same SQL function the triggers use, so the two cannot
 * disagree. The statement's text is the same whatever the units (src/db/prepared.ts).
 */
export function unitKeys(units: readonly ScopeUnit[]) {
  const c = unitColumns(units);
  return sql<string[]>`ARRAY(SELECT memory_stats_unit(u.b, u.a, u.an, u.s)
    FROM unnest(${c.binding}::text[], ${c.agent}::text[], ${c.anchor}::uuid[], ${c.session}::uuid[]) AS u(b, a, an, s))`;
}

export interface ScopeStats {
  /** Active memories in the scope. */
  docs: number;
  /** Their summed length in distinct lexemes. */
  totalLen: number;
}
