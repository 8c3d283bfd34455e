import { sql } from 'kysely';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { DISTRIBUTED_TABLES, distributeForCitus, REFERENCE_TABLES } from '../../src/db/citus-distribute.js';
import { onCitus } from '../../src/db/citus.js';
import type { Db } from '../../src/db/connect.js';
import { enableIterativeScan, vectorParam } from '../../src/db/vector.js';
import { sweepExpiredSessions } from '../../src/domain/lifecycle/sweeper.js';
import { contentKey, newId } from '../../src/domain/text.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { checkedFilter, type MemoryFilter } from '../../src/filter/language.js';
import {
  exactNearestQuery,
  FILTERED_EF_SEARCH,
  FILTERED_SCAN_TUPLES,
  filteredNeighbours,
  vectorNeighbours,
} from '../../src/retrieval/queries/nearest.js';
import type { RecallScope } from '../../src/retrieval/queries/scope.js';
import { startCore, type Running } from '../../src/start-core.js';
import { manualClock, newTenant, testConfig, type Tenant, type TestApi } from '../helpers/harness.js';
import { createAnchor, ids, recall, startSession, storeMemory } from '../helpers/store-recall.js';

/**
 * Against a real Citus cluster (docs/scale-out.md#citus): CITUS_TEST_URL names a database on the
 * coordinator with the citus extension created and at least one worker added, used by this suite
 * alone. Skipped when unset. The suite migrates it, distributes it (`migrate --citus`, which is
 * idempotent) and runs isolation, recall, purge and the sweeper through the distributed tables.
 */
const url = process.env.CITUS_TEST_URL;

describe.skipIf(!url)('on a Citus cluster', () => {
  const clock = manualClock(new Date());
  let running: Running;
  let api: TestApi;

  beforeAll(async () => {
    const config = testConfig({ DATABASE_URL: url ?? '' });
    const options = { embedder: createHashEmbedder(64), clock, log: pino({ level: 'silent' }) };
    // Started twice: the first start migrates a fresh database, which is then distributed.
    const first = await startCore(config, options);
    await distributeForCitus(first.core.db);
    await first.close();
    running = await startCore(config, options);
    api = { app: createApp(running.core), core: running.core, http: request(createApp(running.core)) };
  });

  afterAll(async () => {
    await running?.close();
  });

  it('is detected, and every table is distributed by tenant in one colocation group or copied to every node', async () => {
    expect(running.citus).toBe(true);
    expect(onCitus(running.core.db)).toBe(true);
    const { rows } = await sql<{ table: string; method: string; column: string | null; colocation: number }>`
      SELECT logicalrelid::regclass::text AS table, partmethod AS method,
        column_to_column_name(logicalrelid, partkey) AS column, colocationid AS colocation
      FROM pg_dist_partition`.execute(running.core.db);
    const byTable = new Map(rows.map((r) => [r.table, r]));
    for (const t of REFERENCE_TABLES) expect(byTable.get(t)?.method, t).toBe('n');
    const group = byTable.get('api_keys')?.colocation;
    for (const t of DISTRIBUTED_TABLES) {
      expect(byTable.get(t), t).toMatchObject({ method: 'h', column: 'tenant_id', colocation: group });
    }
    expect(await distributeForCitus(running.core.db)).toEqual([]);
  });

  it('records migration 0017 without running it: memories is one distributed table, not partitions', async () => {
    const { rows } = await sql<{ kind: string; partitions: number; recorded: boolean }>`
      SELECT c.relkind::text AS kind,
        (SELECT count(*)::int FROM pg_inherits WHERE inhparent = c.oid) AS partitions,
        EXISTS (SELECT 1 FROM schema_migrations WHERE name LIKE '0017_%') AS recorded
      FROM pg_class c WHERE c.oid = 'memories'::regclass`.execute(running.core.db);
    expect(rows[0]).toEqual({ kind: 'r', partitions: 0, recorded: true });
  });

  it('looks a key up on its tenant’s shard only', async () => {
    const tenant = await newTenant(api);
    const plan = await sql<{ 'QUERY PLAN': string }>`
      EXPLAIN SELECT id FROM api_keys WHERE tenant_id = ${tenant.tenantId} AND key_hash = ${Buffer.alloc(32)}`.execute(
      running.core.db,
    );
    expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/Task Count: 1\b/);
    expect((await api.http.get('/v1/keys').set(tenant.auth)).status).toBe(200);
  });

  it('keeps tenants and subjects apart', async () => {
    const [a, b] = [await newTenant(api), await newTenant(api)];
    const fact = 'Prefers to be called after six in the evening';
    const mine = await storeMemory(api, a.auth, { agent_id: 'bot', anchor_external_id: 'cust-1', content: fact });
    await storeMemory(api, b.auth, { agent_id: 'bot', anchor_external_id: 'cust-1', content: fact });
    await storeMemory(api, a.auth, { agent_id: 'bot', anchor_external_id: 'cust-2', content: fact });
    const found = await recall(api, a.auth, { agent_id: 'bot', anchor_external_id: 'cust-1', query: 'call' });
    expect(ids(found)).toEqual([mine]);
    expect((await api.http.get(`/v1/memories/${mine}`).set(b.auth)).status).toBe(404);
  });

  /** The settings as the worker holding the tenant's shard sees them, inside the caller's transaction. */
  async function workerSettings(trx: Db, tenantId: string) {
    const { rows } = await sql<{ ef_search: string; iterative_scan: string }>`
      SELECT current_setting('hnsw.ef_search') AS ef_search, current_setting('hnsw.iterative_scan') AS iterative_scan
      FROM memories WHERE tenant_id = ${tenantId} LIMIT 1`.execute(trx);
    return rows[0];
  }

  /** `texts` as memories of the subject, written directly (no store path): a scope of known size and metadata. */
  async function insertFacts(
    tenantId: string,
    anchorId: string,
    texts: string[],
    metadataOf: (i: number) => Record<string, unknown>,
  ): Promise<void> {
    const vectors = await running.core.embedder.embed(texts);
    const now = clock();
    await running.core.db
      .insertInto('memories')
      .values(
        texts.map((content, i) => ({
          tenant_id: tenantId,
          id: newId(),
          agent_id: 'bot',
          content,
          content_key: contentKey(content),
          binding: 'anchored' as const,
          anchor_id: anchorId,
          session_id: null,
          confidence: 0.7,
          decay_rate: 0.01,
          superseded_by: null,
          metadata: JSON.stringify(metadataOf(i)),
          embedding: vectorParam(vectors[i] as Float32Array),
          embedder: running.core.embedder.id,
          created_at: now,
          updated_at: now,
          last_reinforced_at: now,
        })),
      )
      .execute();
  }

  it('gives the workers the HNSW settings, so a filtered HNSW scan returns every row asked for', async () => {
    const tenant = await newTenant(api);
    const anchorId = await createAnchor(api, tenant.auth, 'many-facts');
    const texts = Array.from({ length: 300 }, (_, i) => `fact number ${i} about topic ${i % 17} and item ${i * 7}`);
    await insertFacts(tenant.tenantId, anchorId, texts, () => ({}));
    const scope: RecallScope = {
      tenantId: tenant.tenantId,
      agentId: 'bot',
      anchorId,
      sessionId: null,
      includeSuperseded: false,
    };
    const [query] = (await running.core.embedder.embed(['topic 3 item'])) as [Float32Array];
    const dimensions = running.core.embedder.dimensions;
    const { db } = running.core;

    // The worker's defaults (ef_search 40) answer a scan of 100 with at most 40 rows: what the
    // propagation prevents. Here the settings reach the worker and all 100 come back.
    const { rows, settings } = await db.transaction().execute(async (trx) => {
      const found = await vectorNeighbours({
        db: trx,
        dimensions,
        scope,
        part: 'subject',
        embedding: query,
        depth: 100,
        plan: 'hnsw',
      });
      return { rows: found, settings: await workerSettings(trx, tenant.tenantId) };
    });
    expect(settings).toEqual({ ef_search: '400', iterative_scan: 'relaxed_order' });
    expect(rows).toHaveLength(100);
    const exact = await exactNearestQuery({
      db,
      dimensions,
      scope,
      part: 'subject',
      embedding: query,
      depth: 100,
    }).execute();
    const overlap = rows.filter((r) => exact.some((e) => e.id === r.id)).length;
    expect(overlap).toBeGreaterThanOrEqual(95);

    // Without the mark, the same settings stay on the coordinator (when the shard is on a worker).
    const local = await sql<{ local: boolean }>`
      SELECT p.groupid = (SELECT groupid FROM pg_dist_local_group) AS local
      FROM pg_dist_placement AS p
      WHERE p.shardid = get_shard_id_for_distribution_column('memories', ${tenant.tenantId}::uuid)`.execute(db);
    if (local.rows[0]?.local === false) {
      const unmarked = db.withoutPlugins();
      const plain = await unmarked.transaction().execute(async (trx) => {
        await enableIterativeScan(trx, true);
        return workerSettings(trx, tenant.tenantId);
      });
      expect(plain?.ef_search).not.toBe('400');
    }
  });

  it('gives the workers a filtered walk’s settings, and finds the memories the filter lets through', async () => {
    const tenant = await newTenant(api);
    const anchorId = await createAnchor(api, tenant.auth, 'tagged-facts');
    const texts = Array.from({ length: 300 }, (_, i) => `note ${i} on subject ${i % 13} with mark ${i * 11}`);
    const tagged = (i: number) => i % 10 === 3;
    await insertFacts(tenant.tenantId, anchorId, texts, (i) => (tagged(i) ? { tag: 'needle' } : {}));
    const filter = checkedFilter({ 'metadata.tag': 'needle' }) as MemoryFilter;
    const scope: RecallScope = {
      tenantId: tenant.tenantId,
      agentId: 'bot',
      anchorId,
      sessionId: null,
      includeSuperseded: false,
      filter,
    };
    const [query] = (await running.core.embedder.embed(['subject 3 mark'])) as [Float32Array];
    const q = {
      db: running.core.db,
      dimensions: running.core.embedder.dimensions,
      scope,
      part: 'subject' as const,
      embedding: query,
      depth: 10,
    };

    // The walk's bounds reach the worker holding the shard, as recall's unfiltered settings do.
    const settings = await running.core.db.transaction().execute(async (trx) => {
      await vectorNeighbours({
        ...q,
        db: trx,
        plan: 'hnsw',
        maxScanTuples: FILTERED_SCAN_TUPLES,
        efSearch: FILTERED_EF_SEARCH,
      });
      const { rows } = await sql<{ max_scan_tuples: string; ef_search: string }>`
        SELECT current_setting('hnsw.max_scan_tuples') AS max_scan_tuples, current_setting('hnsw.ef_search') AS ef_search
        FROM memories WHERE tenant_id = ${tenant.tenantId} LIMIT 1`.execute(trx);
      return rows[0];
    });
    expect(settings).toEqual({ max_scan_tuples: String(FILTERED_SCAN_TUPLES), ef_search: String(FILTERED_EF_SEARCH) });

    // 30 of the 300 pass, more than the exact scan's bound of 10: the walk serves them.
    const found = await filteredNeighbours(q, 10);
    const exact = await exactNearestQuery(q).execute();
    expect(found).toHaveLength(10);
    expect(exact).toHaveLength(10);
    const overlap = found.filter((r) => exact.some((e) => e.id === r.id)).length;
    expect(overlap).toBeGreaterThanOrEqual(9);
  });

  it('purges a subject from every table of its shard', async () => {
    const tenant = await newTenant(api);
    const anchorId = await createAnchor(api, tenant.auth, 'to-forget');
    await storeMemory(api, tenant.auth, { agent_id: 'bot', anchor_id: anchorId, content: 'Collects vintage stamps' });
    const session = await startSession(api, tenant.auth, { agent_id: 'bot', anchor_id: anchorId });
    await storeMemory(api, tenant.auth, { agent_id: 'bot', session_id: session, content: 'Is travelling today' });
    const units = () =>
      running.core.db
        .selectFrom('memory_unit_stats')
        .select(['unit', 'docs'])
        .where('tenant_id', '=', tenant.tenantId)
        .execute();
    // The statistics triggers ran on the shard.
    expect((await units()).length).toBeGreaterThanOrEqual(2);
    const res = await api.http.delete(`/v1/anchors/${anchorId}`).set(tenant.auth).query({ purge: 'true' });
    expect(res.status).toBe(200);
    const left = await running.core.db
      .selectFrom('memories')
      .select('id')
      .where('tenant_id', '=', tenant.tenantId)
      .execute();
    expect(left).toEqual([]);
    expect(await units()).toEqual([]);
  });

  it('sweeps expired session memories, one leader at a time', async () => {
    const tenant: Tenant = await newTenant(api);
    const session = await startSession(api, tenant.auth, { agent_id: 'bot', anchor_external_id: 'traveller' });
    const memory = await storeMemory(api, tenant.auth, { agent_id: 'bot', session_id: session, content: 'In Lisbon' });
    expect((await api.http.post(`/v1/sessions/${session}/end`).set(tenant.auth).send({})).status).toBe(200);
    clock.advance(30 * 24 * 3_600_000);
    const results = await Promise.all([sweepExpiredSessions(running.core), sweepExpiredSessions(running.core)]);
    expect(results.some((r) => r.leader)).toBe(true);
    expect((await api.http.get(`/v1/memories/${memory}`).set(tenant.auth)).status).toBe(404);
  });
});
