import { sql, type RawBuilder } from 'kysely';
import type { Db } from './connect.js';
import { executePrepared } from './prepared.js';

/**
 * The statistics of a recall's scope, read from the per-unit counters that migration 0006 keeps by
 * trigger: reading them costs one index probe per unit, whatever the scope's size.
 */

/**
 * One unit of a scope, in the form memory_stats_unit (migration 0006) builds it. An anchored unit
 * without an anchor id (NAMED_SUBJECT) is the subject the statement resolves itself
 * (readScopeStatsNaming), and empty in any other statement.
 */
export type ScopeUnit =
  | { binding: 'private'; agentId: string }
  | { binding: 'anchored'; anchorId: string | null }
  | { binding: 'session'; sessionId: string }
  | { binding: 'canon' };

/** The anchored unit of the subject that readScopeStatsNaming resolves. */
export const NAMED_SUBJECT: ScopeUnit = { binding: 'anchored', anchorId: null };

/** The units as four parallel arrays, the arguments of memory_stats_unit, so that any number of them is one parameter each. */
function unitColumns(units: readonly ScopeUnit[]) {
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
 * The statement of readScopeStats; exported for EXPLAIN in tests. Each unit's counters are looked
 * up by key (LATERAL … LIMIT 1): a join would let a plan made without the values read every
 * counter of the tenant (src/db/prepared.ts). `subject` (a scalar subquery) names the subject of
 * the NAMED_SUBJECT units; its id is returned with every row.
 */
export function scopeStatsQuery(
  tenantId: string,
  scopes: readonly ScopeUnit[][],
  subject: RawBuilder<string | null> = sql`NULL`,
) {
  const units = scopes.flat();
  const parts = scopes.flatMap((scopeUnits, i) => scopeUnits.map(() => i));
  const c = unitColumns(units);
  return sql<{ part: number; subject_id: string | null; docs: number; total_len: number }>`
    WITH subject AS MATERIALIZED (SELECT ${subject}::uuid AS id)
    SELECT u.part, (SELECT id FROM subject) AS subject_id,
      coalesce(sum(s.docs), 0)::float8 AS docs, coalesce(sum(s.total_len), 0)::float8 AS total_len
    FROM unnest(${parts}::int[], ${c.binding}::text[], ${c.agent}::text[], ${c.anchor}::uuid[], ${c.session}::uuid[])
      AS u(part, b, a, an, s)
    LEFT JOIN LATERAL (
      SELECT x.docs, x.total_len FROM memory_unit_stats AS x
      WHERE x.tenant_id = ${tenantId}
        AND x.unit = memory_stats_unit(u.b, u.a, coalesce(u.an, (SELECT id FROM subject)), u.s)
      LIMIT 1
    ) AS s ON true
    GROUP BY u.part`;
}

async function readStats(
  trx: Db,
  tenantId: string,
  scopes: readonly ScopeUnit[][],
  subject?: RawBuilder<string | null>,
) {
  const rows = (await executePrepared(trx, scopeStatsQuery(tenantId, scopes, subject).compile(trx))).rows;
  const byPart = new Map(rows.map((r) => [r.part, { docs: Number(r.docs), totalLen: Number(r.total_len) }]));
  return {
    subjectId: rows[0]?.subject_id ?? null,
    stats: scopes.map((_, i) => byPart.get(i) ?? { docs: 0, totalLen: 0 }),
  };
}

/** The statistics of several scopes (each a list of units) in one statement, in the order given. */
export async function readScopeStats(trx: Db, tenantId: string, scopes: readonly ScopeUnit[][]): Promise<ScopeStats[]> {
  if (scopes.flat().length === 0) return scopes.map(() => ({ docs: 0, totalLen: 0 }));
  return (await readStats(trx, tenantId, scopes)).stats;
}

/**
 * readScopeStats for scopes whose NAMED_SUBJECT units are the subject `subject` finds (a scalar
 * subquery, NULL for none), with that subject's id: a recall naming its subject by external id
 * looks it up in the statement that reads its statistics, one round trip fewer.
 */
export async function readScopeStatsNaming(
  trx: Db,
  tenantId: string,
  scopes: readonly ScopeUnit[][],
  subject: RawBuilder<string | null>,
): Promise<{ subjectId: string | null; stats: ScopeStats[] }> {
  if (!scopes.flat().includes(NAMED_SUBJECT)) throw new Error('no scope names the subject');
  return readStats(trx, tenantId, scopes, subject);
}
