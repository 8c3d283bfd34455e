import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onCitus } from '../../src/db/citus.js';
import type { Db } from '../../src/db/connect.js';
import { ensureVectorIndex, vectorParam } from '../../src/db/vector.js';
import { upsertAnchor } from '../../src/domain/subjects/anchors.js';
import type { Core } from '../../src/domain/core.js';
import { deleteTenant } from '../../src/domain/tenancy/tenant-deletion.js';
import { contentKey, newId } from '../../src/domain/text.js';
import { nearestQuery, vectorNeighbours } from '../../src/retrieval/queries/nearest.js';
import type { RecallScope } from '../../src/retrieval/queries/scope.js';
import { engine, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { ids, recall, sorted } from '../helpers/store-recall.js';

/**
 * Filtered HNSW at a realistic size: thousands of memories across a thousand subjects, inserted in
 * bulk (the store path's embedding and audit would make this minutes instead of seconds).
 */
const SUBJECTS = 1000;
const PER_SUBJECT = 5;
const PRIVATE = 2000;
const BULK_AGENT = 'bulk-agent';
const SMALL_SUBJECT = 'subject-small';
const SMALL_FACTS = [
  'Zora keeps a greenhouse of rare orchids',
  'Zora drinks jasmine tea every morning',
  'Zora repairs vintage bicycles on weekends',
];

// Deterministic word salad: enough vocabulary that vectors spread, the same on every run.
const WORDS = (
  'account address agenda apple balance battery billing blue booking budget cable calendar camera ' +
  'cancel card carpet chair charge city client coffee contract copper course credit delivery dentist ' +
  'desk device dinner discount doctor door email engine expense family fee field flight garden gift ' +
  'glass hotel house insurance invoice kitchen laptop lease letter license loan lunch manager market ' +
  'meeting menu mobile monday morning network office order package parking partner password payment ' +
  'phone plan printer project receipt refund renewal report router salary school screen service ' +
  'shipping shoe signal software station storage subscription support table tax ticket timer train ' +
  'travel tuesday upgrade vacation vendor wallet warranty water window winter'
).split(' ');

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
const random = prng(20260101);
const sentence = (n: number): string =>
  Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)] ?? 'word').join(' ');

interface Row {
  anchorId: string | null;
  agentId: string;
  content: string;
}

async function insertBulk(db: Db, core: Core, tenantId: string, rows: Row[]): Promise<string[]> {
  const vectors = await core.embedder.embed(rows.map((r) => r.content));
  const now = core.clock();
  const inserted: string[] = [];
  for (let start = 0; start < rows.length; start += 250) {
    const values = rows.slice(start, start + 250).map((r, i) => {
      const id = newId();
      inserted.push(id);
      const binding = r.anchorId ? ('anchored' as const) : ('private' as const);
      return {
        tenant_id: tenantId,
        id,
        agent_id: r.agentId,
        content: r.content,
        content_key: contentKey(r.content),
        binding,
        anchor_id: r.anchorId,
        session_id: null,
        confidence: core.config.initialConfidence,
        decay_rate: core.config.decayPerDay[binding],
        superseded_by: null,
        metadata: '{}',
        embedding: vectorParam(vectors[start + i] as Float32Array),
        embedder: core.embedder.id,
        created_at: now,
        updated_at: now,
        last_reinforced_at: now,
      };
    });
    await db.insertInto('memories').values(values).execute();
  }
  return inserted;
}

const parseVector = (text: string): number[] => text.slice(1, -1).split(',').map(Number);

function cosineDistance(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return 1 - dot / Math.sqrt(na * nb);
}

/** Takes away the plans that avoid HNSW (seq scan, bitmap OR, btree + sort), so the HNSW path is what runs. */
async function forceHnsw(trx: Db): Promise<void> {
  await sql`SET LOCAL enable_seqscan = off`.execute(trx);
  await sql`SET LOCAL enable_bitmapscan = off`.execute(trx);
  await sql`SET LOCAL enable_sort = off`.execute(trx);
}

type Plan = 'planner' | 'hnsw';

describe(`recall at scale on ${engine}`, () => {
  let api: TestApi;
  let tenant: Tenant;
  let smallIds: string[] = [];
  let smallAnchor = '';
  let inserted = 0;

  const scopeOf = (agentId: string, anchorId: string | null): RecallScope => ({
    tenantId: tenant.tenantId,
    agentId,
    anchorId,
    sessionId: null,
    includeSuperseded: false,
  });

  async function neighbours(scope: RecallScope, text: string, depth: number, plan: Plan) {
    const { core } = api;
    const [q] = await core.embedder.embed([text]);
    return core.db.transaction().execute(async (trx) => {
      if (plan === 'hnsw') await forceHnsw(trx);
      const input = {
        db: trx,
        dimensions: core.embedder.dimensions,
        scope,
        part: 'subject' as const,
        embedding: q as Float32Array,
        depth,
      };
      const rows = await vectorNeighbours(input);
      // On Citus the coordinator's plan is its own custom scan, and EXPLAIN of a statement with
      // parameters fails on the worker ("could not determine data type of parameter $1").
      if (onCitus(trx)) return { rows, plan: '' };
      const explained = await nearestQuery(input).explain();
      return { rows, plan: explained.map((r) => Object.values(r).join('')).join('\n') };
    });
  }

  beforeAll(async () => {
    api = await testApi();
    tenant = await newTenant(api);
    const { core } = api;
    const started = Date.now();
    const rows: Row[] = [];
    for (let s = 0; s < SUBJECTS; s++) {
      const { id } = await upsertAnchor(core.db, tenant.tenantId, core.clock(), { externalId: `subject-${s}` });
      for (let k = 0; k < PER_SUBJECT; k++) rows.push({ anchorId: id, agentId: 'agent-1', content: sentence(8) });
    }
    smallAnchor = (await upsertAnchor(core.db, tenant.tenantId, core.clock(), { externalId: SMALL_SUBJECT })).id;
    const privateRows = Array.from({ length: PRIVATE }, () => ({
      anchorId: null,
      agentId: BULK_AGENT,
      content: sentence(8),
    }));
    await core.db.transaction().execute(async (trx) => {
      // PGlite (WASM) maintains HNSW at ~5 ms a row, a bulk build at ~1.2 ms. Its database is this
      // worker's own and a worker runs one file at a time, so nobody sees the index missing.
      const index = sql.raw(`memories_embedding_hnsw_${core.embedder.dimensions}`);
      if (engine === 'pglite') await sql`DROP INDEX ${index}`.execute(trx);
      inserted += (await insertBulk(trx, core, tenant.tenantId, rows)).length;
      smallIds = await insertBulk(
        trx,
        core,
        tenant.tenantId,
        SMALL_FACTS.map((content) => ({ anchorId: smallAnchor, agentId: 'agent-1', content })),
      );
      inserted += smallIds.length + (await insertBulk(trx, core, tenant.tenantId, privateRows)).length;
      if (engine === 'pglite') await ensureVectorIndex(trx, core.embedder.dimensions);
    });
    // What autovacuum does on a server (PGlite has none): the planner must know the table's size.
    await sql`ANALYZE memories`.execute(core.db);
    console.log(`scale: inserted ${inserted} memories in ${Date.now() - started} ms`);
  }, 600_000);

  afterAll(async () => {
    // The worker's database outlives this file (and, on Postgres, this run): take the bulk away.
    if (tenant) await deleteTenant(api.core.db, tenant.tenantId);
  });

  it('has the HNSW index, and the vector query reaches it', async (ctx) => {
    // The plans are the workers' there; test/citus checks HNSW on a shard by what it returns.
    if (onCitus(api.core.db)) ctx.skip();
    expect(inserted).toBe(SUBJECTS * PER_SUBJECT + SMALL_FACTS.length + PRIVATE);
    for (const scope of [scopeOf(BULK_AGENT, null), scopeOf('probe-agent', smallAnchor)]) {
      const { plan } = await neighbours(scope, 'invoice refund payment', 20, 'hnsw');
      // The tenant's partition's copy of the index (memories is partitioned by tenant, migration 0017).
      const scan = /Index Scan using (\w+) on memories_p\d{2}\b/.exec(plan);
      expect(scan, plan).not.toBeNull();
      const { rows } = await sql<{ parent: string }>`
        SELECT inhparent::regclass::text AS parent FROM pg_inherits
        WHERE inhrelid = ${scan?.[1] ?? ''}::regclass`.execute(api.core.db);
      expect(rows.map((r) => r.parent)).toEqual(['memories_embedding_hnsw_256']);
    }
    const natural = await neighbours(scopeOf(BULK_AGENT, null), 'invoice refund payment', 20, 'planner');
    console.log(
      `scale: planner's own plan for 2,000 private memories: ${natural.plan
        .split('\n')
        .find((l) => l.includes('Scan'))
        ?.trim()}`,
    );
  });

  it('returns all 3 memories of a small subject, also for an unrelated query', async () => {
    for (const query of ['Zora orchids tea bicycles', 'quarterly tax filing deadline']) {
      const results = await recall(api, tenant.auth, {
        agent_id: 'probe-agent',
        query,
        anchor_external_id: SMALL_SUBJECT,
      });
      expect({ query, ids: sorted(ids(results)) }).toEqual({ query, ids: sorted(smallIds) });
      // The vector side alone, on a filtered HNSW scan: iterative scans keep going until the scope is exhausted.
      const { rows } = await neighbours(scopeOf('probe-agent', smallAnchor), query, 50, 'hnsw');
      expect({ query, ids: sorted(ids(rows)) }).toEqual({ query, ids: sorted(smallIds) });
    }
  });

  it('ranks the vector side of a 2,000-memory scope like an exact search', async () => {
    const stored = await api.core.db
      .selectFrom('memories')
      .select(['id', sql<string>`embedding::text`.as('vector')])
      .where('tenant_id', '=', tenant.tenantId)
      .where('agent_id', '=', BULK_AGENT)
      .execute();
    expect(stored).toHaveLength(PRIVATE);
    const vectors = stored.map((r) => ({ id: r.id, v: parseVector(r.vector) }));
    let hnswFound = 0;
    const queries = Array.from({ length: 8 }, () => sentence(4));
    for (const text of queries) {
      const [q] = await api.core.embedder.embed([text]);
      const query = Array.from(q as Float32Array);
      const distanceOf = new Map(vectors.map((x) => [x.id, cosineDistance(x.v, query)]));
      const exact = [...distanceOf].sort((a, b) => a[1] - b[1]).slice(0, 20);

      // The plan recall gets: the same ids in the same order, ties (equal to 1e-6) excepted.
      const { rows, plan } = await neighbours(scopeOf(BULK_AGENT, null), text, 20, 'planner');
      expect(new Set(ids(rows)).size).toBe(20);
      rows.forEach((row, i) => {
        const [wantId, wantDistance] = exact[i] ?? ['', 0];
        if (row.id === wantId) return;
        const gap = Math.abs((distanceOf.get(row.id) ?? 9) - wantDistance);
        expect({ text, plan, i, tie: gap <= 1e-6 }).toEqual({ text, plan, i, tie: true });
      });

      // HNSW itself is approximate: nearest first, never short, and nearly all of the exact top 20.
      const hnsw = (await neighbours(scopeOf(BULK_AGENT, null), text, 20, 'hnsw')).rows;
      expect(hnsw).toHaveLength(20);
      const distances = hnsw.map((r) => distanceOf.get(r.id) ?? 9);
      distances.forEach((d, i) => expect(d).toBeGreaterThanOrEqual((distances[i - 1] ?? 0) - 1e-6));
      const exactIds = new Set(exact.map(([id]) => id));
      const found = hnsw.filter((r) => exactIds.has(r.id)).length;
      expect(found).toBeGreaterThanOrEqual(18);
      hnswFound += found;
    }
    const hnswRecall = hnswFound / (queries.length * 20);
    console.log(`scale: exact top 20 matched on ${queries.length} queries; forced HNSW recall@20 = ${hnswRecall}`);
    expect(hnswRecall).toBeGreaterThanOrEqual(0.95);
  });
});
