import { sql } from 'kysely';
import type { Db } from './connect.js';
import { executePrepared } from './prepared.js';

/**
 * The statistics of a recall's scope, read from the per-unit counters that migration 0006 keeps by
 * trigger: reading them costs one index probe per unit, whatever the scope's size.
 */

/**
 * One unit of a scope, in the form memory_stats_unit (migration 0006) builds it. An anchored unit
 * without an anchor id (NAMED_SUBJECT) is the subject the scope read resolves itself
 * (src/db/scope-read.ts), and empty in any other statement.
 */
export type ScopeUnit =
  | { binding: 'private'; agentId: string }
  | { binding: 'anchored'; anchorId: string | null }
  | { binding: 'session'; sessionId: string }
  | { binding: 'canon' };

/** The anchored unit of the subject that the scope read resolves (src/db/scope-read.ts). */
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

/**
 * The statement of readScopeStats. Each unit's counters are looked up by key (LATERAL … LIMIT 1): a
 * join would let a plan made without the values read every counter of the tenant (src/db/prepared.ts).
 */
export function scopeStatsQuery(tenantId: string, scopes: readonly ScopeUnit[][]) {
  const units = scopes.flat();
  const parts = scopes.flatMap((scopeUnits, i) => scopeUnits.map(() => i));
  const c = unitColumns(units);
  return sql<{ part: number; docs: number; total_len: number }>`
    SELECT u.part, coalesce(sum(s.docs), 0)::float8 AS docs, coalesce(sum(s.total_len), 0)::float8 AS total_len
    FROM unnest(${parts}::int[], ${c.binding}::text[], ${c.agent}::text[], ${c.anchor}::uuid[], ${c.session}::uuid[])
      AS u(part, b, a, an, s)
    LEFT JOIN LATERAL (
      SELECT x.docs, x.total_len FROM memory_unit_stats AS x
      WHERE x.tenant_id = ${tenantId} AND x.unit = memory_stats_unit(u.b, u.a, u.an, u.s)
      LIMIT 1
    ) AS s ON true
    GROUP BY u.part`;
}

/**
 * The statistics of several scopes (each a list of units) in one statement, in the order given.
 * Recall reads them with its scope (src/db/scope-read.ts); this reads them alone.
 */
export async function readScopeStats(trx: Db, tenantId: string, scopes: readonly ScopeUnit[][]): Promise<ScopeStats[]> {
  if (scopes.flat().length === 0) return scopes.map(() => ({ docs: 0, totalLen: 0 }));
  const rows = (await executePrepared(trx, scopeStatsQuery(tenantId, scopes).compile(trx))).rows;
  const byPart = new Map(rows.map((r) => [r.part, { docs: Number(r.docs), totalLen: Number(r.total_len) }]));
  return scopes.map((_, i) => byPart.get(i) ?? { docs: 0, totalLen: 0 });
}
