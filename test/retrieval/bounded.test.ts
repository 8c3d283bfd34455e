import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLAN_MODE, PREPARED_PLAN_MODE } from '../../src/db/prepared-driver.js';
import { ensureVectorIndex, vectorParam } from '../../src/db/vector.js';
import { subjectIdByExternalId, upsertAnchor } from '../../src/domain/subjects/anchors.js';
import type { Actor } from '../../src/domain/core.js';
import { contentKey, newId } from '../../src/domain/text.js';
import { candidatesQuery, LEXICAL_BUDGET } from '../../src/retrieval/queries/candidates.js';
import type { RecallScope, ScopeToRead } from '../../src/retrieval/queries/scope.js';
import { PREPARED_SCOPE_MAX, scopeReadStatement } from '../../src/retrieval/queries/scope-read.js';
import { recall } from '../../src/retrieval/recall.js';
import { checkedFilter, type MemoryFilter } from '../../src/filter/language.js';
import { pino } from 'pino';
import request from 'supertest';
import { createApp } from '../../src/app.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { startCore, type Running } from '../../src/start-core.js';
import { capturingStatements } from '../helpers/captured-statements.js';
import { engine, newTenant, testConfig, type Tenant, type TestApi } from '../helpers/harness.js';
import { isolatedDatabase, type IsolatedDb } from '../helpers/isolated-db.js';
import { subjectPart, subjectStats } from '../helpers/lexical-scores.js';

/**
 * Recall reads a number of memories bounded by its candidates, not by its scope: every statement a
 * recall runs is replayed under EXPLAIN ANALYZE, and the rows it reads from memories are counted.
 */
const MEMORIES = 20_000;
const SESSIONS = 100;
// Far below the scope's size: a statement that reads every memory of the scope cannot pass.
const ROW_BOUND = 5_000;
/** A typical subject beside the big one, recalled by prepared statements (PREPARED_SCOPE_MAX). */
const SMALL = 100;
/** Memories of the big subject that the selective filter lets through, and the broad filter's. */
const NEEDLES = 5;
const needle = (i: number) => i % 4000 === 1234;
const third = (i: number) => Math.floor(i / SESSIONS) % 3 === 0;
const SELECTIVE = { 'metadata.tag': 'needle' };
// About a third of the subject: beyond the exact scan's bound, so HNSW serves it.
const BROAD = { 'metadata.third': true };
const SELECTIVE_TREE = checkedFilter(SELECTIVE) as MemoryFilter;
const BROAD_TREE = checkedFilter(BROAD) as MemoryFilter;

const WORDS = (
  'account address agenda apple balance battery billing blue booking budget cable calendar camera ' +
  'cancel card carpet chair charge city client coffee contract copper course credit delivery dentist ' +
  'desk device dinner discount doctor door email engine expense family fee field flight garden gift ' +
  'glass hotel house insurance invoice kitchen laptop lease letter license loan lunch manager market'
).split(' ');

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** A table named, or one of its partitions (memories_p00 … of memories, migration 0017). */
const readsTable = (relation: string, tables: readonly string[]): boolean =>
  tables.includes(relation) || tables.includes(relation.replace(/_p\d{2}$/, ''));

/** Rows read from memories (or the tables named) by a plan: returned plus filtered away, over every loop. */
function memoryRowsRead(node: PlanNode, tables: readonly string[] = ['memories']): number {
  const own = readsTable(node['Relation Name'] ?? '', tables)
    ? ((node['Actual Rows'] ?? 0) +
        (node['Rows Removed by Filter'] ?? 0) +
        (node['Rows Removed by Index Recheck'] ?? 0)) *
      (node['Actual Loops'] ?? 1)
    : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + memoryRowsRead(child, tables), 0);
}

describe(`recall's cost on ${engine}`, () => {
  let api: TestApi;
  let tenant: Tenant;
  let actor: Actor;
  let iso: IsolatedDb | undefined;
  let running: Running | undefined;

  beforeAll(async () => {
    // A database of its own: 20,000 rows added and deleted would crowd the HNSW index that other
    // files' filtered scans walk (deleted rows stay in it until a vacuum).
    iso = await isolatedDatabase();
    // Exact scans end at 3,000 memories here, so the 20,000-memory scope walks HNSW (the default,
    // 20,000, would scan it exactly: a bounded cost too, but not the one this test is about).
    running = await startCore(testConfig({ ...iso.env, RECALL_EXACT_SCAN_MAX: '3000' }), {
      embedder: createHashEmbedder(256),
      log: pino({ level: 'silent' }),
    });
    const app = createApp(running.core);
    api = { app, core: running.core, http: request(app) };
    tenant = await newTenant(api);
    actor = { tenantId: tenant.tenantId, keyId: newId(), scopes: new Set(['read', 'write', 'admin']) };
    const { core } = api;
    const anchor = await upsertAnchor(core.db, tenant.tenantId, core.clock(), { externalId: 'big-subject' });
    const now = core.clock();
    const sessions = Array.from({ length: SESSIONS }, () => newId());
    await core.db
      .insertInto('sessions')
      .values(
        sessions.map((id) => ({
          tenant_id: tenant.tenantId,
          id,
          agent_id: 'agent-1',
          anchor_id: anchor.id,
          started_at: now,
          metadata: '{}',
        })),
      )
      .execute();
    const contents = Array.from({ length: MEMORIES }, (_, i) => {
      const words = Array.from({ length: 8 }, (_, k) => WORDS[(i * 7 + k * 13 + ((i * k) % 11)) % WORDS.length]);
      // A rare word in a few memories, so that the lexical side has something worth fetching.
      return `${words.join(' ')}${i % 4000 === 17 ? ' zeppelin' : ''}`;
    });
    const vectors = await core.embedder.embed(contents);
    await core.db.transaction().execute(async (trx) => {
      // PGlite maintains HNSW at ~5 ms a row and builds it at ~1.2 ms; nobody else uses this database.
      const index = sql.raw(`memories_embedding_hnsw_${core.embedder.dimensions}`);
      if (engine === 'pglite') await sql`DROP INDEX ${index}`.execute(trx);
      for (let start = 0; start < MEMORIES; start += 500) {
        await trx
          .insertInto('memories')
          .values(
            contents.slice(start, start + 500).map((content, j) => ({
              tenant_id: tenant.tenantId,
              id: newId(),
              agent_id: 'agent-1',
              content,
              content_key: contentKey(content),
              binding: 'anchored' as const,
              anchor_id: anchor.id,
              session_id: sessions[(start + j) % SESSIONS] ?? null,
              confidence: 0.7,
              decay_rate: 0.01,
              superseded_by: null,
              metadata: JSON.stringify({
                ...(needle(start + j) ? { tag: 'needle' } : {}),
                ...(third(start + j) ? { third: true } : {}),
              }),
              embedding: vectorParam(vectors[start + j] as Float32Array),
              embedder: core.embedder.id,
              created_at: now,
              updated_at: now,
              last_reinforced_at: now,
            })),
          )
          .execute();
      }
      const small = await upsertAnchor(trx, tenant.tenantId, now, { externalId: 'small-subject' });
      await trx
        .insertInto('memories')
        .values(
          contents.slice(0, SMALL).map((content, j) => ({
            tenant_id: tenant.tenantId,
            id: newId(),
            agent_id: 'agent-1',
            content,
            content_key: contentKey(content),
            binding: 'anchored' as const,
            anchor_id: small.id,
            session_id: null,
            confidence: 0.7,
            decay_rate: 0.01,
            superseded_by: null,
            metadata: '{}',
            embedding: vectorParam(vectors[j] as Float32Array),
            embedder: core.embedder.id,
            created_at: now,
            updated_at: now,
            last_reinforced_at: now,
          })),
        )
        .execute();
      if (engine === 'pglite') await ensureVectorIndex(trx, core.embedder.dimensions);
    });
    await sql`ANALYZE memories`.execute(core.db);
  }, 600_000);

  afterAll(async () => {
    await running?.close();
    await iso?.drop();
  });

  async function rowsPerStatement(query: string, filter?: MemoryFilter): Promise<{ rows: number; results: number }[]> {
    const { plugin, captured } = capturingStatements(api.core.db);
    const results = await recall({ ...api.core, db: api.core.db.withPlugin(plugin) }, actor, {
      agentId: 'agent-1',
      query,
      anchor: { anchorExternalId: 'big-subject' },
      limit: 10,
      includeSuperseded: false,
      filter,
    });
    expect(results.length).toBe(filter === undefined || filter === BROAD_TREE ? 10 : NEEDLES);
    // Replayed in order in one transaction, so that what a statement sets holds for the next.
    return api.core.db.transaction().execute(async (trx) => {
      const out: { rows: number; results: number }[] = [];
      for (const q of captured) {
        // Settings (SET LOCAL) cannot be explained: they run as they are.
        if (!/^\s*(select|with)\b/i.test(q.sql)) {
          await trx.executeQuery(q);
          continue;
        }
        const explained = await trx.executeQuery<{ 'QUERY PLAN': unknown }>({
          ...q,
          sql: `EXPLAIN (ANALYZE, FORMAT JSON) ${q.sql}`,
        });
        const raw = explained.rows[0]?.['QUERY PLAN'];
        const doc = (typeof raw === 'string' ? JSON.parse(raw) : raw) as { Plan: PlanNode }[];
        const plan = doc[0]?.Plan as PlanNode;
        out.push({ rows: memoryRowsRead(plan), results: plan['Actual Rows'] ?? 0 });
      }
      return out;
    });
  }

  it(`reads at most ${ROW_BOUND} of the ${MEMORIES} memories of a subject in each statement`, async () => {
    for (const query of ['zeppelin invoice kitchen', 'billing address for the hotel booking']) {
      const statements = await rowsPerStatement(query);
      const reads = statements.map((s) => s.rows);
      console.log(`bounded: "${query}": memories rows read per statement ${JSON.stringify(reads)}`);
      expect(statements.length).toBeGreaterThanOrEqual(3);
      for (const rows of reads) expect({ query, rows, bounded: rows <= ROW_BOUND }).toMatchObject({ bounded: true });
    }
  });

  it(`reads at most ${ROW_BOUND} memories in each statement with a filter, selective or broad`, async () => {
    for (const [label, filter] of [
      ['selective', SELECTIVE_TREE],
      ['broad', BROAD_TREE],
    ] as const) {
      const reads = (await rowsPerStatement('billing address for the hotel booking', filter)).map((s) => s.rows);
      console.log(`bounded: ${label} filter: memories rows read per statement ${JSON.stringify(reads)}`);
      for (const rows of reads) expect({ label, rows, bounded: rows <= ROW_BOUND }).toMatchObject({ bounded: true });
    }
  });

  it(`recalls the ${NEEDLES} of the ${MEMORIES} memories a filter lets through, whatever the query`, async () => {
    for (const query of ['billing address for the hotel booking', 'zeppelin invoice kitchen']) {
      const results = await recall(api.core, actor, {
        agentId: 'agent-1',
        query,
        anchor: { anchorExternalId: 'big-subject' },
        limit: 10,
        includeSuperseded: false,
        filter: SELECTIVE_TREE,
      });
      expect(results.map((r) => r.metadata.tag)).toEqual(Array.from({ length: NEEDLES }, () => 'needle'));
    }
    const broad = await recall(api.core, actor, {
      agentId: 'agent-1',
      query: 'billing address for the hotel booking',
      anchor: { anchorExternalId: 'big-subject' },
      limit: 10,
      includeSuperseded: false,
      filter: BROAD_TREE,
    });
    expect(broad.map((r) => r.metadata.third)).toEqual(Array.from({ length: 10 }, () => true));
  });

  /** A subject of this test's tenant as recall sees it, with a query's vector and the scope's statistics. */
  async function subject(externalId: string, text: string) {
    const { core } = api;
    const anchor = await upsertAnchor(core.db, tenant.tenantId, core.clock(), { externalId });
    const scope: RecallScope = {
      tenantId: tenant.tenantId,
      agentId: 'agent-1',
      anchorId: anchor.id,
      sessionId: null,
      includeSuperseded: false,
    };
    const [embedding] = await core.embedder.embed([text], { kind: 'query' });
    const stats = await subjectStats(core, scope);
    return { anchor, scope, text, embedding, stats };
  }

  it('finds the memories holding two query words when each word is too common to fetch alone', async () => {
    const { core } = api;
    const { anchor, scope, text, embedding, stats } = await subject('big-subject', 'invoice kitchen');
    const holding = (word: string) =>
      core.db
        .selectFrom('memories')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('tenant_id', '=', tenant.tenantId)
        .where('anchor_id', '=', anchor.id)
        .where('content', 'like', `%${word}%`)
        .executeTakeFirstOrThrow();
    // Each word alone is beyond the lexical budget, so a search by rare words alone finds nothing.
    for (const word of ['invoice', 'kitchen']) expect(Number((await holding(word)).n)).toBeGreaterThan(LEXICAL_BUDGET);
    const part = subjectPart(core, scope, stats, text, embedding as Float32Array, 50);
    const { rows } = await candidatesQuery({ ...part, nearest: [] }).execute(core.db);
    const lexical = rows.filter((r) => r.candidate && r.lexical > 0);
    expect(lexical.length).toBe(50);
    const contents = await core.db
      .selectFrom('memories')
      .select('content')
      .where('tenant_id', '=', tenant.tenantId)
      .where(
        'id',
        'in',
        lexical.map((r) => r.id),
      )
      .execute();
    // The best by BM25 hold both words, or follow one that does (a share of its predecessor's).
    const both = contents.filter((c) => c.content.includes('invoice') && c.content.includes('kitchen'));
    expect(both.length).toBeGreaterThanOrEqual(25);
  });

  /** A parameter as an SQL literal, for EXECUTE. */
  const literal = (v: unknown): string =>
    v === null
      ? 'NULL'
      : Array.isArray(v)
        ? `'{${(v as (string | null)[]).map((x) => (x === null ? 'NULL' : `"${x}"`)).join(',')}}'`
        : typeof v === 'number'
          ? String(v)
          : `'${(v as string).replaceAll("'", "''")}'`;

  it('runs the prepared statements of a small scope, with their generic plans, through the scope', async () => {
    const { core } = api;
    const { scope, text, embedding, stats } = await subject('small-subject', 'billing address for the hotel booking');
    expect(stats.docs).toBe(SMALL);
    expect(SMALL).toBeLessThanOrEqual(PREPARED_SCOPE_MAX);
    const dims = core.embedder.dimensions;
    // The statement recall prepares for a small scope: its statistics and its memories, with the
    // subject looked up by external id, or given.
    const unanchored = { ...scope, anchorId: null };
    const read = (toRead: ScopeToRead) =>
      scopeReadStatement({
        db: core.db,
        dimensions: dims,
        toRead,
        parts: ['subject', 'canon'],
        text,
        embedding: embedding as Float32Array,
      }).compile(core.db);
    // The big subject's part is beyond the read's bound: its gate keeps the plan from reading it.
    const big = (await subject('big-subject', text)).scope;
    const statements = [
      read({ scope: unanchored, named: subjectIdByExternalId(tenant.tenantId, 'small-subject') }),
      read({ scope }),
      read({ scope: big }),
      read({ scope: unanchored, named: subjectIdByExternalId(tenant.tenantId, 'big-subject') }),
    ];
    // Marked statements run with a plan made without their values (src/db/connect.ts): that plan
    // must find the scope and its counters by their indexes, not read the tables (which a parameter
    // in place of a binding once made it do, since the partial indexes name their binding, and a
    // join did over the whole tenant).
    const reads = await core.db.connection().execute(async (c) => {
      const out: number[] = [];
      for (const [i, q] of statements.entries()) {
        const run = (statement: string) =>
          c.executeQuery<{ 'QUERY PLAN': unknown }>(sql`${sql.raw(statement)}`.compile(core.db));
        await run(`PREPARE settled_${i} AS ${q.sql}`);
        const args = q.parameters.map(literal).join(', ');
        await run(PREPARED_PLAN_MODE);
        const explained = await run(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE settled_${i}(${args})`);
        await run(DEFAULT_PLAN_MODE);
        await run(`DEALLOCATE settled_${i}`);
        const raw = explained.rows[0]?.['QUERY PLAN'];
        const doc = (typeof raw === 'string' ? JSON.parse(raw) : raw) as { Plan: PlanNode }[];
        out.push(memoryRowsRead(doc[0]?.Plan as PlanNode, ['memories', 'memory_term_stats', 'memory_unit_stats']));
      }
      return out;
    });
    console.log(`bounded: prepared statements of a ${SMALL}-memory scope: memories rows read ${JSON.stringify(reads)}`);
    for (const rows of reads) expect(rows).toBeLessThanOrEqual(2_000);
  });
});
