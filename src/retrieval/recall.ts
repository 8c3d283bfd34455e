import { type ExpressionBuilder, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../db/connect.js';
import { anyTermQuery, lexicalMatch, lexicalRank } from '../db/fulltext.js';
import type { Database } from '../db/schema.js';
import { cosineDistance, enableIterativeScan } from '../db/vector.js';
import { resolveAnchor, type AnchorRef } from '../domain/anchors.js';
import type { Actor, Core } from '../domain/core.js';
import { MEMORY_COLUMNS, memoriesWithAnchor, toMemory, type Memory, type MemoryRow } from '../domain/memories.js';
import { resolveSession } from '../domain/sessions.js';
import { effectiveConfidence } from '../domain/decay.js';
import { AppError } from '../errors.js';
import { fuse, type ScoreDetails } from './fusion.js';

export interface RecallInput {
  agentId: string;
  query: string;
  anchor: AnchorRef;
  sessionId?: string | undefined;
  limit: number;
  includeSuperseded: boolean;
}

export type RecallResult = Memory & { score: number; score_details: ScoreDetails };

/** Which memories a recall may see, resolved to ids; enforced in SQL by scopeFilter. */
export interface RecallScope {
  tenantId: string;
  agentId: string;
  /** The subject whose anchored memories are visible; null for none. */
  anchorId: string | null;
  /** The session whose session memories are visible; null for none. */
  sessionId: string | null;
  includeSuperseded: boolean;
}

type MemoryEb = ExpressionBuilder<Database & { m: Database['memories'] }, 'm'>;

/** The visibility rule of API.md §5, as SQL: never another agent's private memory, anchor or tenant. */
export function scopeFilter(eb: MemoryEb, scope: RecallScope, part: 'subject' | 'canon'): Expression<SqlBool> {
  const visible =
    part === 'canon'
      ? [eb('m.binding', '=', 'canon')]
      : [
          eb.and([eb('m.binding', '=', 'private'), eb('m.agent_id', '=', scope.agentId)]),
          ...(scope.anchorId
            ? [eb.and([eb('m.binding', '=', 'anchored'), eb('m.anchor_id', '=', scope.anchorId)])]
            : []),
          ...(scope.sessionId
            ? [eb.and([eb('m.binding', '=', 'session'), eb('m.session_id', '=', scope.sessionId)])]
            : []),
        ];
  return eb.and([
    eb('m.tenant_id', '=', scope.tenantId),
    ...(scope.includeSuperseded ? [] : [eb('m.status', '=', 'active')]),
    eb.or(visible),
  ]);
}

interface CandidateRow extends MemoryRow {
  distance: number;
  lexical_rank: number;
}

/** The vector side's SQL: ordered by cosine distance, so HNSW can serve it. Exported for EXPLAIN in tests. */
export function nearestQuery(
  trx: Db,
  dimensions: number,
  scope: RecallScope,
  part: 'subject' | 'canon',
  query: Float32Array,
  depth: number,
) {
  const distance = cosineDistance(dimensions, query);
  return trx
    .selectFrom('memories as m')
    .select(['m.id', distance.as('distance')])
    .where((eb) => scopeFilter(eb, scope, part))
    .orderBy(distance)
    .limit(depth);
}

/**
 * Nearest neighbours by cosine distance within the scope, nearest first. With iterative scans on, a
 * filtered HNSW scan keeps going until it has `depth` rows that pass the filter (or the scope is exhausted).
 */
export async function vectorNeighbours(
  trx: Db,
  dimensions: number,
  scope: RecallScope,
  part: 'subject' | 'canon',
  query: Float32Array,
  depth: number,
): Promise<{ id: string; distance: number }[]> {
  await enableIterativeScan(trx);
  const rows = await nearestQuery(trx, dimensions, scope, part, query, depth).execute();
  // relaxed_order lets an iterative HNSW scan return rows slightly out of distance order.
  return rows.sort((a, b) => a.distance - b.distance);
}

async function candidates(
  trx: Db,
  dimensions: number,
  scope: RecallScope,
  part: 'subject' | 'canon',
  text: string,
  embedding: Float32Array,
  depth: number,
): Promise<CandidateRow[]> {
  const nearest = await vectorNeighbours(trx, dimensions, scope, part, embedding, depth);
  const tsquery = anyTermQuery(text);
  const lexical = await trx
    .selectFrom('memories as m')
    .select(['m.id'])
    .where((eb) => eb.and([scopeFilter(eb, scope, part), lexicalMatch(tsquery)]))
    .orderBy(lexicalRank(tsquery), 'desc')
    .limit(depth)
    .execute();
  const ids = [...new Set([...nearest.map((r) => r.id), ...lexical.map((r) => r.id)])];
  if (ids.length === 0) return [];
  // Both parts are computed for every candidate, so fusion sees each memory from both sides.
  return memoriesWithAnchor(trx)
    .select([
      ...MEMORY_COLUMNS,
      cosineDistance(dimensions, embedding).as('distance'),
      lexicalRank(tsquery).as('lexical_rank'),
    ])
    .where('m.tenant_id', '=', scope.tenantId)
    .where('m.id', 'in', ids)
    .execute();
}

/** How many candidates each side brings: enough that fusion can reorder beyond the cut. */
const candidateDepth = (limit: number): number => Math.max(50, limit * 4);

export const canonCap = (limit: number): number => Math.max(1, Math.floor(limit * 0.3));

export async function recall(core: Core, actor: Actor, input: RecallInput): Promise<RecallResult[]> {
  const [embedding] = await core.embedder.embed([input.query]);
  if (!embedding) throw new Error('embedder returned no vector');
  const now = core.clock();
  const rows = await core.db.transaction().execute(async (trx) => {
    // Recall never creates an anchor: an unknown external id matches no subject memories.
    const named = await resolveAnchor(trx, core, actor.tenantId, input.anchor, false);
    const session = input.sessionId
      ? await resolveSession(trx, actor.tenantId, input.sessionId, named, { mustBeActive: false })
      : undefined;
    const anchorNamed = input.anchor.anchorId !== undefined || input.anchor.anchorExternalId !== undefined;
    // An unknown external id is still a subject other than the session's: resolveSession only sees ids.
    if (anchorNamed && named === null && session?.anchorId) {
      throw new AppError('conflict', 'the session belongs to another anchor than the one named');
    }
    const scope: RecallScope = {
      tenantId: actor.tenantId,
      agentId: input.agentId,
      // A session of a subject brings that subject's durable memories along, unless an anchor was named.
      anchorId: anchorNamed ? (named ?? null) : (session?.anchorId ?? null),
      // An expired session's memories are gone even before the sweeper deletes them.
      sessionId: session && !(session.expiresAt && session.expiresAt <= now) ? session.sessionId : null,
      includeSuperseded: input.includeSuperseded,
    };
    const depth = candidateDepth(input.limit);
    const dims = core.embedder.dimensions;
    const subject = await candidates(trx, dims, scope, 'subject', input.query, embedding, depth);
    const canon = await candidates(
      trx,
      dims,
      scope,
      'canon',
      input.query,
      embedding,
      Math.max(10, canonCap(input.limit) * 4),
    );
    return [...subject, ...canon];
  });
  const scored = fuse(
    rows,
    (r) => ({
      distance: r.distance,
      lexicalRank: r.lexical_rank,
      binding: r.binding,
      effectiveConfidence: effectiveConfidence(r.confidence, r.decay_rate, r.last_reinforced_at, now),
      lastReinforcedAt: r.last_reinforced_at,
    }),
    now,
  ).sort((a, b) => b.score - a.score || a.item.id.localeCompare(b.item.id));
  const cap = canonCap(input.limit);
  const results: RecallResult[] = [];
  let canonTaken = 0;
  for (const s of scored) {
    if (results.length >= input.limit) break;
    if (s.item.binding === 'canon') {
      if (canonTaken >= cap) continue;
      canonTaken++;
    }
    results.push({ ...toMemory(s.item, now), score: s.score, score_details: s.details });
  }
  return results;
}
