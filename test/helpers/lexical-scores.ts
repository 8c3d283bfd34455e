import type { ScopeStats } from '../../src/db/scope-stats.js';
import { candidatesQuery, type CandidateRow } from '../../src/retrieval/queries/candidates.js';
import type { RecallScope } from '../../src/retrieval/queries/scope.js';
import { scopeReadStatement } from '../../src/retrieval/queries/scope-read.js';
import { scanPart } from '../../src/retrieval/recall.js';
import type { Core } from '../../src/domain/core.js';
import type { TestApi } from './harness.js';

/** The statistics of the subject part of `scope` as recall reads them: the scope read's header row. */
export async function subjectStats(core: Core, scope: RecallScope): Promise<ScopeStats> {
  const dims = core.embedder.dimensions;
  // No query: the statistics do not depend on it.
  const statement = scopeReadStatement({
    db: core.db,
    dimensions: dims,
    toRead: { scope },
    parts: ['subject'],
    text: '',
    embedding: new Float32Array(dims),
  });
  const header = (await statement.execute(core.db)).rows.find((r) => r.id === null);
  if (!header) throw new Error('the scope read returned no statistics');
  return { docs: header.docs, totalLen: header.total_len };
}

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
  const stats = await subjectStats(core, scope);
  const [embedding] = await core.embedder.embed([text], { kind: 'query' });
  const part = subjectPart(core, scope, stats, text, embedding as Float32Array, 10);
  const byId = (rows: CandidateRow[]) => new Map(rows.filter((r) => r.candidate).map((r) => [r.id, r.lexical]));
  return {
    scan: byId(await scanPart(part)),
    lookup: byId((await candidatesQuery({ ...part, nearest: [] }).execute(core.db)).rows),
  };
}
