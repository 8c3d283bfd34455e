import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import {
  distributeForCitus,
  distributionPlan,
  readForeignKeys,
  workerNodeSettings,
} from '../../src/db/citus-distribute.js';
import { openPostgres } from '../../src/db/connect.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { startCore, type Running } from '../../src/start-core.js';
import { citusDatabase } from '../helpers/citus.js';
import { applyMigrations } from '../helpers/earlier-schema.js';
import { newTenant, testConfig, type TestApi } from '../helpers/harness.js';
import { createAnchor, ids, recall, startSession, storeMemory } from '../helpers/store-recall.js';

/**
 * An upgrade on a cluster (docs/scale-out.md#citus): a database distributed as an earlier release
 * left it (every migration before 0010, with memories stored), then started by this release, which
 * applies 0010 (it drops and creates a trigger of the distributed `memories`) and 0016 (the
 * statistics and window triggers' new bodies) on the distributed tables. Stores, deletes and recall
 * work afterwards and the statistics equal a recount. The suite makes a database of its own on the
 * coordinator and on each worker of CITUS_TEST_URL's cluster (same user), and drops it at the end.
 */
const url = process.env.CITUS_TEST_URL;

describe.skipIf(!url)('an upgrade on a Citus cluster (0010 and 0016 applied to distributed tables)', () => {
  let cluster: Awaited<ReturnType<typeof citusDatabase>> | undefined;
  let running: Running;
  let api: TestApi;
  let dbUrl: string;
  let seededTenant: string;

  beforeAll(async () => {
    cluster = await citusDatabase(url as string);
    dbUrl = cluster.url;

    // The earlier release: its migrations, a memory stored, then distributed.
    const earlier = await openPostgres(dbUrl, 2);
    try {
      await applyMigrations(earlier.db, (f) => f < '0010');
      seededTenant = randomUUID();
      await sql`INSERT INTO tenants (id, org_name) VALUES (${seededTenant}, ${`org-${seededTenant}`})`.execute(
        earlier.db,
      );
      const vector = `[${Array.from({ length: 64 }, (_, i) => (i === 3 ? 1 : 0)).join(',')}]`;
      const now = new Date();
      await sql`INSERT INTO memories (tenant_id, id, agent_id, content, content_key, binding, confidence, decay_rate,
          embedding, embedder, created_at, updated_at, last_reinforced_at)
        VALUES (${seededTenant}, ${randomUUID()}, 'bot', 'Keeps bees on the roof', 'keeps bees on the roof', 'private',
          0.7, 0, ${vector}::vector, ${createHashEmbedder(64).id}, ${now}, ${now}, ${now})`.execute(earlier.db);
      // The tables the earlier release had, distributed as its `migrate --citus` did.
      const { rows } = await sql<{ table: string }>`
        SELECT tablename AS table FROM pg_tables WHERE schemaname = current_schema()`.execute(earlier.db);
      const present = new Set(rows.map((r) => r.table));
      const absent = ['tenants', 'service_settings', 'api_key_tenants', 'api_keys', 'memory_term_stats'].filter(
        (t) => !present.has(t),
      );
      expect(absent).toEqual([]);
      await earlier.db.transaction().execute(async (trx) => {
        await sql`SET LOCAL citus.multi_shard_modify_mode = 'sequential'`.execute(trx);
        await sql`SET LOCAL citus.enable_unsafe_triggers = on`.execute(trx);
        const everyTable = distributionPlan({ done: new Set(), foreignKeys: await readForeignKeys(trx) });
        const plan = distributionPlan({
          done: new Set(
            everyTable
              .map((s) => /create_(?:distributed|reference)_table\('([a-z_]+)'/.exec(s)?.[1])
              .filter((t): t is string => t !== undefined && !present.has(t)),
          ),
          foreignKeys: await readForeignKeys(trx),
        });
        for (const statement of plan) await sql.raw(statement).execute(trx);
      });
    } finally {
      await earlier.close();
    }

    // This release: its start applies 0010 onwards to the distributed tables, then `migrate --citus`.
    const config = testConfig({ DATABASE_URL: dbUrl });
    const options = { embedder: createHashEmbedder(64), log: pino({ level: 'silent' }) };
    const first = await startCore(config, options);
    await distributeForCitus(first.core.db);
    await first.close();
    running = await startCore(config, options);
    api = { app: createApp(running.core), core: running.core, http: request(createApp(running.core)) };
  }, 120_000);

  afterAll(async () => {
    await running?.close();
    await cluster?.drop();
  });

  it('applied the trigger migrations to the distributed tables, and every worker has JIT off', async () => {
    const { rows } = await sql<{ name: string }>`SELECT name FROM schema_migrations ORDER BY 1`.execute(
      running.core.db,
    );
    expect(rows.map((r) => r.name)).toEqual(
      expect.arrayContaining(['0010_memory_concepts.sql', '0016_statistics_triggers_per_tenant.sql']),
    );
    expect(running.citus).toBe(true);
    const settings = await workerNodeSettings(running.core.db);
    const { rows: workers } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_dist_node WHERE groupid <> 0`.execute(running.core.db);
    expect(settings.length).toBe(workers[0]?.n);
    expect(settings.length).toBeGreaterThan(0);
    for (const s of settings) expect(s, s.node).toMatchObject({ name: 'jit', value: 'off' });
  });

  it('stores, reinforces, supersedes, deletes and recalls, with statistics equal to a recount', async () => {
    const t = await newTenant(api);
    const anchorId = await createAnchor(api, t.auth, 'beekeeper');
    const session = await startSession(api, t.auth, { agent_id: 'bot', anchor_id: anchorId });
    const first = await storeMemory(api, t.auth, { agent_id: 'bot', session_id: session, content: 'Has three hives' });
    await storeMemory(api, t.auth, { agent_id: 'bot', session_id: session, content: 'The hives are on the roof' });
    await storeMemory(api, t.auth, { agent_id: 'bot', anchor_id: anchorId, content: 'Sells honey at the market' });
    const again = await api.http
      .post('/v1/memories')
      .set(t.auth)
      .send({ agent_id: 'bot', anchor_id: anchorId, content: 'Sells honey at the market' });
    expect(again.body).toMatchObject({ outcome: 'reinforced' });
    expect((await api.http.delete(`/v1/memories/${first}`).set(t.auth)).status).toBeLessThan(300);
    const found = await recall(api, t.auth, { agent_id: 'bot', anchor_id: anchorId, query: 'honey' });
    expect(found.length).toBeGreaterThan(0);

    const db = running.core.db;
    for (const tenantId of [t.tenantId, seededTenant]) {
      const kept = await sql<{ unit: string; docs: number; total_len: number }>`
        SELECT unit, docs::int AS docs, total_len::int AS total_len FROM memory_unit_stats
        WHERE tenant_id = ${tenantId} ORDER BY unit`.execute(db);
      const recount = await sql<{ unit: string; docs: number; total_len: number }>`
        SELECT memory_stats_unit(m.binding, m.agent_id, m.anchor_id, m.session_id) AS unit, count(*)::int AS docs,
          sum(length(m.search))::int AS total_len
        FROM memories AS m WHERE m.tenant_id = ${tenantId} AND m.status = 'active' GROUP BY 1 ORDER BY 1`.execute(db);
      expect(kept.rows).toEqual(recount.rows);
      const keptTerms = await sql<{ unit: string; lexeme: string; df: number }>`
        SELECT unit, lexeme, df::int AS df FROM memory_term_stats WHERE tenant_id = ${tenantId}
        ORDER BY unit, lexeme`.execute(db);
      const recountTerms = await sql<{ unit: string; lexeme: string; df: number }>`
        SELECT memory_stats_unit(m.binding, m.agent_id, m.anchor_id, m.session_id) AS unit, l.lexeme, count(*)::int AS df
        FROM memories AS m CROSS JOIN LATERAL unnest(tsvector_to_array(m.search)) AS l(lexeme)
        WHERE m.tenant_id = ${tenantId} AND m.status = 'active' GROUP BY 1, 2 ORDER BY 1, 2`.execute(db);
      expect(keptTerms.rows).toEqual(recountTerms.rows);
      expect(keptTerms.rows.length).toBeGreaterThan(0);
    }
    const seeded = await sql<{ id: string }>`SELECT id FROM memories WHERE tenant_id = ${seededTenant}`.execute(db);
    expect(ids(seeded.rows)).toHaveLength(1);
  });
});
