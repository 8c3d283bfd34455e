import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reembedMemories, type ReembedProgress } from '../../src/reembed.js';
import type { Db } from '../../src/db/connect.js';
import { toVectorLiteral } from '../../src/db/vector.js';
import { newId } from '../../src/domain/text.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { recall } from '../../src/retrieval/recall.js';
import type { Running } from '../../src/start-core.js';
import { conceptsOf } from '../../src/text/concepts.js';
import { engine } from '../helpers/harness.js';
import { startedAfter } from '../helpers/earlier-schema.js';
import type { IsolatedDb } from '../helpers/isolated-db.js';

const embedder = createHashEmbedder(64);
const NOTES = ['I spent the evening playing my violin.', 'We took the night train to Spain.', 'Lunch was late.'];

/** The counters of migration 0006, as rows to compare. */
async function statistics(db: Db) {
  const terms = await sql<{ unit: string; lexeme: string; df: string }>`
    SELECT unit, lexeme, df::text AS df FROM memory_term_stats ORDER BY unit, lexeme`.execute(db);
  const units = await sql<{ unit: string; docs: string; total_len: string }>`
    SELECT unit, docs::text AS docs, total_len::text AS total_len FROM memory_unit_stats ORDER BY unit`.execute(db);
  return { terms: terms.rows, units: units.rows };
}

/** The counters as they would be counted again from the memories themselves. */
async function recounted(db: Db) {
  const terms = await sql<{ unit: string; lexeme: string; df: string }>`
    SELECT memory_stats_unit(m.binding, m.agent_id, m.anchor_id, m.session_id) AS unit, l.lexeme, count(*)::text AS df
    FROM memories AS m CROSS JOIN LATERAL unnest(tsvector_to_array(m.search)) AS l(lexeme)
    WHERE m.status = 'active' GROUP BY 1, 2 ORDER BY 1, 2`.execute(db);
  const units = await sql<{ unit: string; docs: string; total_len: string }>`
    SELECT memory_stats_unit(m.binding, m.agent_id, m.anchor_id, m.session_id) AS unit, count(*)::text AS docs,
      sum(length(m.search))::text AS total_len
    FROM memories AS m WHERE m.status = 'active' GROUP BY 1 ORDER BY 1`.execute(db);
  return { terms: terms.rows, units: units.rows };
}

/**
 * A database as 0.7 left it (every migration before 0010, three private memories stored then), started
 * with 0010: the full-text vectors and statistics are unchanged, recall works, and `reembed` computes
 * the concepts, with the statistics following.
 */
describe(`migration 0010 on a database in use, on ${engine}`, () => {
  let iso: IsolatedDb;
  let running: Running;
  let before: Awaited<ReturnType<typeof statistics>>;
  const tenantId = newId();
  const ids = NOTES.map(() => newId());
  const actor = { tenantId, keyId: null, scopes: new Set(['read'] as const) };
  const ask = (query: string) =>
    recall(running.core, actor, { agentId: 'a', query, anchor: {}, limit: 3, includeSuperseded: false });

  beforeAll(async () => {
    ({ iso, running } = await startedAfter(
      // Every migration before 0010, as 0.7 had: a later one (0017's copy of memories) names its column.
      (f) => f < '0010',
      async (db) => {
        const now = new Date();
        await sql`INSERT INTO tenants (id, org_name) VALUES (${tenantId}, ${`org-${tenantId}`})`.execute(db);
        const vectors = await embedder.embed(NOTES);
        for (const [i, content] of NOTES.entries()) {
          await sql`INSERT INTO memories (tenant_id, id, agent_id, content, content_key, binding,
              confidence, decay_rate, embedding, embedder, created_at, updated_at, last_reinforced_at)
            VALUES (${tenantId}, ${ids[i]}, 'a', ${content}, ${content}, 'private', 0.7, 0,
              ${toVectorLiteral(vectors[i] as Float32Array)}::vector, ${embedder.id}, ${now}, ${now}, ${now})`.execute(
            db,
          );
        }
        before = await statistics(db);
      },
      embedder,
    ));
  });

  afterAll(async () => {
    await running?.close();
    await iso.drop();
  });

  it('keeps the full-text vectors and the statistics, and recall works without concepts', async () => {
    const db = running.core.db;
    expect(await statistics(db)).toEqual(before);
    const { rows } = await sql<{ same: boolean; concepts: string | null }>`
      SELECT m.search = setweight(to_tsvector('english', m.content), 'A') AS same, m.concepts
      FROM memories AS m WHERE m.tenant_id = ${tenantId}`.execute(db);
    expect(rows).toEqual(NOTES.map(() => ({ same: true, concepts: null })));
    expect((await ask('violin'))[0]?.id).toBe(ids[0]);
    // Room on every page for a reinforcement's new row version (a HOT update): on each partition of
    // memories since 0017, which keeps the options a partitioned table cannot hold itself.
    const { rows: options } = await sql<{ options: string[] }>`
      SELECT c.reloptions AS options FROM pg_class AS c JOIN pg_inherits AS i ON i.inhrelid = c.oid
      WHERE i.inhparent = 'memories'::regclass`.execute(db);
    expect(options.length).toBe(16);
    for (const o of options) expect(o.options).toContain('fillfactor=85');
  });

  it('gets the concepts from reembed, once, and the statistics follow', async () => {
    const db = running.core.db;
    const progress: ReembedProgress[] = [];
    const done = await reembedMemories({ db }, embedder, { batchSize: 2, onProgress: (p) => progress.push(p) });
    expect(done).toEqual({ reembedded: 0, windows: 0, concepts: 3 });
    expect(progress).toEqual([
      { done: 0, total: 0 },
      { done: 0, total: 3 },
      { done: 2, total: 3 },
      { done: 3, total: 3 },
    ]);
    const { rows } = await sql<{ id: string; concepts: string }>`
      SELECT id, concepts FROM memories WHERE tenant_id = ${tenantId}`.execute(db);
    expect(new Map(rows.map((r) => [r.id, r.concepts]))).toEqual(
      new Map(ids.map((id, i) => [id, conceptsOf(NOTES[i] as string)])),
    );
    const after = await statistics(db);
    expect(after).toEqual(await recounted(db));
    expect(after.terms.find((t) => t.lexeme === 'european')?.df).toBe('1');
    // A question that names the kind now finds the memory that names the thing.
    const found = (await ask('Which European country did we visit?')).find((r) => r.id === ids[1]);
    expect(found?.score_details.lexical).toBeGreaterThan(0);
    expect(await reembedMemories({ db }, embedder)).toEqual({ reembedded: 0, windows: 0, concepts: 0 });
  });
});
