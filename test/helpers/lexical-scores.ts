import type { CandidateRow } from '../../src/db/candidates.js';
import { readScopeStats, type ScopeStats } from '../../src/db/scope-stats.js';
import { candidatesQuery, scanPart, scopeUnits, type RecallScope } from '../../src/retrieval/recall.js';
import type { Core } from '../../src/domain/core.js';
import type { TestApi } from './harness.js';

/** The subject part of `scope` as both candidate statements take it (src/retrieval/recall.ts, PartQuery). */
export function subjectPart(
  core: Core,
  scope: RecallScope,
  stats: ScopeStats,
  text: string,
  embedding: Float32Array,
  depth: number,
) {
  return {
    db: core.db,
    dimensions: core.embedder.dimensions,
    scope,
    part: 'subject' as const,
    stats,
    text,
    embedding,
    depth,
  };
}

/**
 * Each candidate's BM25 for `text` among agent `a`'s private memories, by the scope read ranked in
 * process and by the lookup statement (given no vector candidates), by id.
 */
export async function lexicalScores(api: TestApi, tenantId: string, text: string) {
  const { core } = api;
  const scope: RecallScope = { tenantId, agentId: 'a', anchorId: null, sessionId: null, includeSuperseded: false };
  const [stats] = await readScopeStats(core.db, tenantId, [scopeUnits(scope, 'subject')]);
  const [embedding] = await core.embedder.embed([text], { kind: 'query' });
  const part = subjectPart(core, scope, stats!, text, embedding as Float32Array, 10);
  const byId = (rows: CandidateRow[]) => new Map(rows.filter((r) => r.candidate).map((r) => [r.id, r.lexical]));
  return {
    scan: byId(await scanPart(part)),
    lookup: byId((await candidatesQuery(part, []).execute(core.db)).rows),
  };
}
