import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connect.js';
import { readMigrations, runsOnCitus } from '../../src/db/migrate.js';
import { toVectorLiteral } from '../../src/db/vector.js';
import { deleteTenant } from '../../src/domain/tenancy/tenant-deletion.js';
import { newId } from '../../src/domain/text.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { recall } from '../../src/retrieval/recall.js';
import type { Running } from '../../src/start-core.js';
import { engine } from '../helpers/harness.js';
import { startedAfter } from '../helpers/earlier-schema.js';
import type { IsolatedDb } from '../helpers/isolated-db.js';

const embedder = createHashEmbedder(64);
const TENANTS = 6;
const NOTES = ['I spent the evening playing my violin.', 'We took the night train to Spain.', 'Lunch was late.'];

/** Every memory as a row of text, the generated and sequence columns included. */
async function memoryRows(db: Db) {
  const { rows } = await sql<Record<string, string>>`
    SELECT m.tenant_id::text, m.id::text, m.agent_id, m.content, m.binding, m.anchor_id::text, m.session_id::text,
      m.status, m.seq::text, m.search::text, m.embedding::text, m.window_embedding::text, m.metadata::text,
      m.occurred_at::text, m.pinned::text
    FROM memories AS m ORDER BY m.tenant_id, m.id`.execute(db);
  return rows;
}

/** The counters of migration 0006, and the same counted again from the memories. */
async function statistics(db: Db) {
  const kept = await sql<{ t: string; unit: string; lexeme: string; df: string }>`
    SELECT tenant_id::text AS t, unit, lexeme, df::text AS df FROM memory_term_stats ORDER BY 1, 2, 3`.execute(db);
  const units = await sql<{ t: string; unit: string; docs: string; len: string }>`
    SELECT tenant_id::text AS t, unit, docs::text AS docs, total_len::text AS len FROM memory_unit_stats ORDER BY 1, 2`.execute(
    db,
  );
  const recountedTerms = await sql<{ t: string; unit: string; lexeme: string; df: string }>`
    SELECT m.tenant_id::text AS t, memory_stats_unit(m.binding, m.agent_id, m.anchor_id, m.session_id) AS unit, l.lexeme,
      count(*)::text AS df
    FROM memories AS m CROSS JOIN LATERAL unnest(tsvector_to_array(m.search)) AS l(lexeme)
    WHERE m.status = 'active' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`.execute(db);
  const recountedUnits = await sql<{ t: string; unit: string; docs: string; len: string }>`
    SELECT m.tenant_id::text AS t, memory_stats_unit(m.binding, m.agent_id, m.anchor_id, m.session_id) AS unit,
      count(*)::text AS docs, sum(length(m.search))::text AS len
    FROM memories AS m WHERE m.status = 'active' GROUP BY 1, 2 ORDER BY 1, 2`.execute(db);
  return {
    kept: { terms: kept.rows, units: units.rows },
    recounted: { terms: recountedTerms.rows, units: recountedUnits.rows },
  };
}

/** The names of memories' indexes, constraints and triggers of its own, and what references it. */
async function shape(db: Db) {
  const indexes = await sql<{ name: string; def: string }>`
    SELECT indexname AS name, regexp_replace(indexdef, ' ON (ONLY )?\\S+ USING ', ' ON memories USING ') AS def
    FROM pg_indexes WHERE tablename = 'memories' ORDER BY 1`.execute(db);
  const constraints = await sql<{ name: string; def: string }>`
    SELECT conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint
    WHERE (conrelid = 'memories'::regclass OR confrelid = 'memories'::regclass) AND conparentid = 0 ORDER BY 1`.execute(
    db,
  );
  const triggers = await sql<{ name: string; def: string }>`
    SELECT tgname AS name, pg_get_triggerdef(oid) AS def FROM pg_trigger
    WHERE tgrelid = 'memories'::regclass AND NOT tgisinternal ORDER BY 1`.execute(db);
  return { indexes: indexes.rows, constraints: constraints.rows, triggers: triggers.rows };
}

/**
 * A database as the release before 0017 left it (memories of several tenants in every binding, a
 * mention, window vectors, the HNSW index of the embedder), started with 0017: `memories` is then
 * 16 hash partitions of tenant_id holding the same rows, with the same indexes, keys and triggers
 * under the same names, and the statistics, the sequence, the cascades and recall work as before.
 */
describe(`migration 0017 (memories partitioned by tenant) on a database in use, on ${engine}`, () => {
  let iso: IsolatedDb;
  let running: Running;
  let before: { rows: Awaited<ReturnType<typeof memoryRows>>; shape: Awaited<ReturnType<typeof shape>> };
  const tenants = Array.from({ length: TENANTS }, () => newId());
  const sessions = tenants.map(() => newId());
  const anchors = tenants.map(() => newId());
  const mentioned = newId();

  beforeAll(async () => {
    ({ iso, running } = await startedAfter(
      (f) => f < '0017',
      async (db) => {
        const now = new Date();
        await sql
          .raw(
            `CREATE INDEX memories_embedding_hnsw_64 ON memories USING hnsw ((embedding::vector(64)) vector_cosine_ops)`,
          )
          .execute(db);
        const vectors = await embedder.embed(NOTES);
        const v = (i: number) => toVectorLiteral(vectors[i % NOTES.length] as Float32Array);
        for (const [t, tenantId] of tenants.entries()) {
          await sql`INSERT INTO tenants (id, org_name) VALUES (${tenantId}, ${`org-${tenantId}`})`.execute(db);
          await sql`INSERT INTO entities (tenant_id, id, external_id) VALUES (${tenantId}, ${anchors[t]}, 'customer')`.execute(
            db,
          );
          await sql`INSERT INTO sessions (tenant_id, id, agent_id, anchor_id, started_at)
            VALUES (${tenantId}, ${sessions[t]}, 'a', ${anchors[t]}, ${now})`.execute(db);
          for (const [i, content] of NOTES.entries()) {
            const rows: [string, string | null, string | null, string | null][] = [
              ['private', null, null, null],
              ['anchored', anchors[t] as string, null, null],
              ['session', anchors[t] as string, sessions[t] as string, i > 0 ? v(i + 1) : null],
            ];
            for (const [binding, anchorId, sessionId, window] of rows) {
              const id = t === 0 && i === 0 && binding === 'private' ? mentioned : newId();
              await sql`INSERT INTO memories (tenant_id, id, agent_id, content, content_key, binding, anchor_id,
                  session_id, status, confidence, decay_rate, embedding, window_embedding, embedder, metadata,
                  created_at, updated_at, last_reinforced_at)
                VALUES (${tenantId}, ${id}, 'a', ${`${content} (${binding})`}, ${`${content} (${binding})`}, ${binding},
                  ${anchorId}, ${sessionId}, ${i === 2 && binding === 'private' ? 'superseded' : 'active'}, 0.7, 0,
                  ${v(i)}::vector, ${window}::vector, ${embedder.id}, ${JSON.stringify({ n: i })}, ${now}, ${now}, ${now})`.execute(
                db,
              );
            }
          }
          await sql`INSERT INTO memories (tenant_id, id, agent_id, content, content_key, binding, confidence,
              decay_rate, embedding, embedder, created_at, updated_at, last_reinforced_at)
            VALUES (${tenantId}, ${newId()}, 'admin', 'Support hours are nine to five', 'support hours are nine to five',
              'canon', 1, 0, ${v(0)}::vector, ${embedder.id}, ${now}, ${now}, ${now})`.execute(db);
        }
        await sql`INSERT INTO memory_mentions (tenant_id, memory_id, session_id)
          VALUES (${tenants[0]}, ${mentioned}, ${sessions[0]})`.execute(db);
        before = { rows: await memoryRows(db), shape: await shape(db) };
        const stats = await statistics(db);
        expect(stats.kept).toEqual(stats.recounted);
      },
      embedder,
    ));
  });

  afterAll(async () => {
    await running?.close();
    await iso.drop();
  });

  it('makes memories 16 hash partitions of tenant_id holding every row unchanged, each tenant in one', async () => {
    const db = running.core.db;
    const { rows: key } = await sql<{ key: string }>`
      SELECT pg_get_partkeydef('memories'::regclass) AS key`.execute(db);
    expect(key[0]?.key).toBe('HASH (tenant_id)');
    const { rows: parts } = await sql<{ name: string; bound: string }>`
      SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
      FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'memories'::regclass ORDER BY 1`.execute(db);
    expect(parts).toEqual(
      Array.from({ length: 16 }, (_, n) => ({
        name: `memories_p${String(n).padStart(2, '0')}`,
        bound: `FOR VALUES WITH (modulus 16, remainder ${n})`,
      })),
    );
    expect(await memoryRows(db)).toEqual(before.rows);
    const { rows: spread } = await sql<{ tenants: number; partitions: number; most: number }>`
      SELECT count(DISTINCT tenant_id)::int AS tenants, count(DISTINCT tableoid)::int AS partitions,
        (SELECT max(n)::int FROM (SELECT count(DISTINCT tableoid) AS n FROM memories GROUP BY tenant_id) AS x) AS most
      FROM memories`.execute(db);
    expect(spread[0]?.tenants).toBe(TENANTS);
    expect(spread[0]?.most).toBe(1);
    expect(spread[0]?.partitions).toBeGreaterThan(1);
  });

  it('keeps every index, key, check and trigger under its name, and the old table is gone', async () => {
    const db = running.core.db;
    expect(await shape(db)).toEqual(before.shape);
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_class WHERE relname = 'memories_unpartitioned'`.execute(db);
    expect(rows[0]?.n).toBe(0);
  });

  it('keeps the statistics, which follow stores, updates and deletes across partitions', async () => {
    const db = running.core.db;
    let stats = await statistics(db);
    expect(stats.kept).toEqual(stats.recounted);
    // A statement touching several tenants' partitions at once, then an update that moves units.
    await sql`UPDATE memories SET status = 'superseded' WHERE content LIKE 'Lunch%' AND binding = 'anchored'`.execute(
      db,
    );
    await sql`UPDATE memories SET content = 'We took the slow boat to Norway.' WHERE content LIKE 'We took%' AND binding = 'session'`.execute(
      db,
    );
    await sql`DELETE FROM memories WHERE binding = 'private' AND tenant_id = ANY (${tenants.slice(0, 3)}::uuid[])`.execute(
      db,
    );
    stats = await statistics(db);
    expect(stats.kept).toEqual(stats.recounted);
    expect(stats.kept.terms.some((t) => t.lexeme === 'norway')).toBe(true);
  });

  it('keeps the sequence, the window trigger and the cascades', async () => {
    const db = running.core.db;
    const top = await sql<{ seq: string }>`SELECT max(seq)::text AS seq FROM memories`.execute(db);
    const id = newId();
    const now = new Date();
    const vector = toVectorLiteral((await embedder.embed(['x']))[0] as Float32Array);
    await sql`INSERT INTO memories (tenant_id, id, agent_id, content, content_key, binding, confidence, decay_rate,
        embedding, embedder, created_at, updated_at, last_reinforced_at)
      VALUES (${tenants[5]}, ${id}, 'a', 'A new one', 'a new one', 'private', 0.7, 0, ${vector}::vector, ${embedder.id},
        ${now}, ${now}, ${now})`.execute(db);
    const added = await sql<{ seq: string }>`SELECT seq::text AS seq FROM memories WHERE id = ${id}`.execute(db);
    expect(BigInt(added.rows[0]?.seq ?? 0)).toBeGreaterThan(BigInt(top.rows[0]?.seq ?? 0));
    // The first session memory of tenant 4 goes: the window of the one after it is cleared.
    const session = await sql<{ id: string; window: boolean }>`
      SELECT id, window_embedding IS NOT NULL AS window FROM memories
      WHERE tenant_id = ${tenants[4]} AND session_id = ${sessions[4]} ORDER BY seq`.execute(db);
    expect(session.rows.map((r) => r.window)).toEqual([false, true, true]);
    await sql`DELETE FROM memories WHERE tenant_id = ${tenants[4]} AND id = ${session.rows[0]?.id}`.execute(db);
    const windows = await sql<{ window: boolean }>`
      SELECT window_embedding IS NOT NULL AS window FROM memories
      WHERE tenant_id = ${tenants[4]} AND session_id = ${sessions[4]} ORDER BY seq`.execute(db);
    expect(windows.rows.map((r) => r.window)).toEqual([false, true]);
    // The foreign key from memory_mentions points at the partitioned table.
    await expect(
      sql`INSERT INTO memory_mentions (tenant_id, memory_id, session_id) VALUES (${tenants[1]}, ${newId()}, ${sessions[1]})`.execute(
        db,
      ),
    ).rejects.toThrow(/foreign key/);
    // A tenant deleted: its memories go by the cascade and its counters with them.
    await deleteTenant(db, tenants[5] as string);
    const left = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM memories WHERE tenant_id = ${tenants[5]}`.execute(db);
    expect(left.rows[0]?.n).toBe(0);
    const stats = await statistics(db);
    expect(stats.kept).toEqual(stats.recounted);
  });

  it('recalls as before', async () => {
    const actor = { tenantId: tenants[2] as string, keyId: null, scopes: new Set(['read'] as const) };
    const results = await recall(running.core, actor, {
      agentId: 'a',
      query: 'violin',
      anchor: { anchorId: anchors[2] },
      limit: 3,
      includeSuperseded: false,
    });
    expect(results[0]?.content).toContain('violin');
    expect(results.every((r) => r.binding !== 'private' || r.agent_id === 'a')).toBe(true);
  });

  it('is recorded without running on Citus, which spreads memories over its shards already', async () => {
    const migrations = await readMigrations();
    expect(migrations.filter((m) => !runsOnCitus(m.sql)).map((m) => m.name)).toEqual([
      '0017_memories_partitioned_by_tenant.sql',
    ]);
  });
});
