import { sql } from 'kysely';
import type { Db } from './connect.js';

/**
 * The statistics of a recall's scope, read from the per-unit counters that migration 0006 keeps by
 * trigger: reading them costs one index probe per unit, whatever the scope's size.
 */

/** One unit of a scope, in the form memory_stats_unit (migration 0006) builds it. */
export type ScopeUnit =
  | { binding: 'private'; agentId: string }
  | { binding: 'anchored'; anchorId: string }
  | { binding: 'session'; sessionId: string }
  | { binding: 'canon' };

/** The unit key, computed by the same SQL function the triggers use, so the two cannot disagree. */
export function unitKey(u: ScopeUnit) {
  const agent = u.binding === 'private' ? u.agentId : '';
  const anchor = u.binding === 'anchored' ? u.anchorId : null;
  const session = u.binding === 'session' ? u.sessionId : null;
  return sql<string>`memory_stats_unit(${u.binding}, ${agent}, ${anchor}::uuid, ${session}::uuid)`;
}

export interface ScopeStats {
  /** Active memories in the scope. */
  docs: number;
  /** Their summed length in distinct lexemes. */
  totalLen: number;
}

/** The statistics of several scopes (each a list of units) in one statement, in the order given. */
export async function readScopeStats(trx: Db, tenantId: string, scopes: readonly ScopeUnit[][]): Promise<ScopeStats[]> {
  const pairs = scopes.flatMap((units, i) => units.map((u) => sql`(${i}::int, ${unitKey(u)})`));
  if (pairs.length === 0) return scopes.map(() => ({ docs: 0, totalLen: 0 }));
  const rows = await sql<{ part: number; docs: number; total_len: number }>`
    SELECT u.part, coalesce(sum(s.docs), 0)::float8 AS docs, coalesce(sum(s.total_len), 0)::float8 AS total_len
    FROM (VALUES ${sql.join(pairs)}) AS u(part, unit)
    LEFT JOIN memory_unit_stats AS s ON s.tenant_id = ${tenantId} AND s.unit = u.unit
    GROUP BY u.part`.execute(trx);
  const byPart = new Map(rows.rows.map((r) => [r.part, { docs: Number(r.docs), totalLen: Number(r.total_len) }]));
  return scopes.map((_, i) => byPart.get(i) ?? { docs: 0, totalLen: 0 });
}
