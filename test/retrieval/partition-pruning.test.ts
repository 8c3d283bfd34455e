import { sql, type CompiledQuery } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connect.js';
import type { Core } from '../../src/domain/core.js';
import { DEFAULT_PLAN_MODE, PREPARED_PLAN_MODE } from '../../src/db/prepared-driver.js';
import { candidatesQuery } from '../../src/retrieval/queries/candidates.js';
import { vectorNeighbours } from '../../src/retrieval/queries/nearest.js';
import type { RecallScope } from '../../src/retrieval/queries/scope.js';
import { recall } from '../../src/retrieval/recall.js';
import { capturingStatements } from '../helpers/captured-statements.js';
import { testDatabaseIsCitus } from '../helpers/citus.js';
import { subjectPart, subjectStats } from '../helpers/lexical-scores.js';
import { engine, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { createAnchor, startSession, storeMemory, writeCanon } from '../helpers/store-recall.js';

/**
 * `memories` is 16 hash partitions of tenant_id (migration 0017): every statement a recall runs
 * names its tenant, so each must read that tenant's partition and no other, with the plan Postgres
 * makes for its values and with the generic plan of a prepared statement (src/db/prepared-driver.ts),
 * which prunes when the executor starts ("Subplans Removed").
 */
interface PlanNode {
  'Relation Name'?: string;
  'Index Name'?: string;
  'Subplans Removed'?: number;
  Plans?: PlanNode[];
}

const MEMORIES_TABLE = /^memories(_p\d{2})?$/;

/** The memories tables (the partitioned table or its partitions) a plan reads, and the subplans it pruned at start. */
function walk(node: PlanNode, out: { tables: Set<string>; removed: number[]; indexes: Set<string> }): typeof out {
  const name = node['Relation Name'];
  if (name !== undefined && MEMORIES_TABLE.test(name)) {
    out.tables.add(name);
    if (node['Index Name'] !== undefined) out.indexes.add(node['Index Name']);
  }
  if (node['Subplans Removed'] !== undefined) out.removed.push(node['Subplans Removed']);
  for (const child of node.Plans ?? []) walk(child, out);
  return out;
}

/** A parameter as an SQL literal, for EXECUTE of a prepared statement. */
function literal(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (v instanceof Date) return `'${v.toISOString()}'`;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) {
    const items = v.map((x) =>
      x === null ? 'NULL' : `"${String(x).replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`,
    );
    return `'{${items.join(',').replaceAll("'", "''")}}'`;
  }
  if (typeof v !== 'string') throw new Error(`a parameter of an unexpected kind: ${typeof v}`);
  return `'${v.replaceAll("'", "''")}'`;
}

function planOf(raw: unknown): PlanNode {
  const doc = (typeof raw === 'string' ? JSON.parse(raw) : raw) as { Plan: PlanNode }[];
  return doc[0]?.Plan as PlanNode;
}

// On Citus migration 0017 does not run (its shards split memories by tenant instead): nothing to prune.
const citus = await testDatabaseIsCitus();

describe.skipIf(citus)(`recall reads its tenant's partition of memories only, on ${engine}`, () => {
  let api: TestApi;
  let tenant: Tenant;
  let partition: string;
  let anchorId: string;
  let sessionId: string;

  beforeAll(async () => {
    api = await testApi();
    // Tenants beside the one recalled, so that other partitions hold rows too.
    const tenants = [await newTenant(api), await newTenant(api), await newTenant(api)];
    tenant = tenants[0] as Tenant;
    for (const t of tenants) {
      const anchor = await createAnchor(api, t.auth, 'customer-1');
      const session = await startSession(api, t.auth, { agent_id: 'agent-a', anchor_id: anchor });
      if (t === tenant) [anchorId, sessionId] = [anchor, session];
      for (const content of ['The invoice goes to the billing address', 'Prefers email over phone calls']) {
        await storeMemory(api, t.auth, { agent_id: 'agent-a', content });
        await storeMemory(api, t.auth, {
          agent_id: 'agent-a',
          content: `${content} (customer)`,
          anchor_external_id: 'customer-1',
        });
        await storeMemory(api, t.auth, { agent_id: 'agent-a', content: `${content} today`, session_id: session });
      }
      await writeCanon(api, t.auth, 'Support hours are nine to five');
    }
    const { rows } = await sql<{ partition: string }>`
      SELECT DISTINCT tableoid::regclass::text AS partition FROM memories WHERE tenant_id = ${tenant.tenantId}`.execute(
      api.core.db,
    );
    expect(rows.length).toBe(1);
    partition = (rows[0] as { partition: string }).partition;
  });

  it('is a table of 16 hash partitions of tenant_id', async () => {
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'memories'::regclass`.execute(api.core.db);
    expect(rows[0]?.n).toBe(16);
    expect(partition).toMatch(/^memories_p\d{2}$/);
  });

  /** Every statement `run` sends through the database it is given, as compiled, in the order run. */
  async function statementsOf(core: Core, run: (db: Db) => Promise<unknown>) {
    const { plugin, captured } = capturingStatements(core.db);
    await run(core.db.withPlugin(plugin));
    return captured;
  }

  /**
   * Each statement that reads memories explained with its values' plan and with a generic plan: the
   * memories tables read, and pruning. Replayed in order in one transaction, so that the settings a
   * statement makes (the HNSW walk's) hold for the next.
   */
  async function explained(statements: CompiledQuery[]) {
    const out: { custom: Set<string>; generic: Set<string>; removed: number[]; indexes: Set<string> }[] = [];
    await api.core.db.transaction().execute(async (trx) => {
      const run = (text: string, parameters: readonly unknown[] = []) =>
        trx.executeQuery<{ 'QUERY PLAN': unknown }>({ ...sql`${sql.raw(text)}`.compile(trx), parameters });
      for (const [i, q] of statements.entries()) {
        if (!/\bmemories\b/.test(q.sql)) {
          await run(q.sql, q.parameters);
          continue;
        }
        const custom = await run(`EXPLAIN (ANALYZE, FORMAT JSON) ${q.sql}`, q.parameters);
        await run(`PREPARE pruned_${i} AS ${q.sql}`);
        await run(PREPARED_PLAN_MODE);
        const generic = await run(
          `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE pruned_${i}(${q.parameters.map(literal).join(', ')})`,
        );
        await run(DEFAULT_PLAN_MODE);
        await run(`DEALLOCATE pruned_${i}`);
        const g = walk(planOf(generic.rows[0]?.['QUERY PLAN']), { tables: new Set(), removed: [], indexes: new Set() });
        const c = walk(planOf(custom.rows[0]?.['QUERY PLAN']), { tables: new Set(), removed: [], indexes: new Set() });
        out.push({
          custom: c.tables,
          generic: g.tables,
          removed: g.removed,
          indexes: new Set([...c.indexes, ...g.indexes]),
        });
      }
    });
    return out;
  }

  function expectOnePartition(label: string, plans: Awaited<ReturnType<typeof explained>>): void {
    console.log(
      `partitions (${label}): ${JSON.stringify(
        plans.map((p) => ({
          custom: [...p.custom],
          generic: [...p.generic],
          removed: p.removed,
          indexes: [...p.indexes],
        })),
      )}`,
    );
    expect(plans.length).toBeGreaterThan(0);
    for (const p of plans) {
      expect([...p.custom]).toEqual([partition]);
      expect([...p.generic]).toEqual([partition]);
    }
  }

  it('a small scope: every statement of a recall reads one partition, with its values and generically', async () => {
    const actor = { tenantId: tenant.tenantId, keyId: null, scopes: new Set(['read'] as const) };
    const statements = await statementsOf(api.core, async (db) => {
      const results = await recall({ ...api.core, db }, actor, {
        agentId: 'agent-a',
        query: 'where does the invoice go',
        anchor: { anchorId },
        sessionId,
        limit: 5,
        includeSuperseded: false,
      });
      expect(results.length).toBeGreaterThan(0);
    });
    expectOnePartition('scope read', await explained(statements));
  });

  it("a large scope's statements (HNSW walk, exact scan, candidates) read one partition, with their values and generically", async () => {
    const { core } = api;
    const scope: RecallScope = {
      tenantId: tenant.tenantId,
      agentId: 'agent-a',
      anchorId,
      sessionId: null,
      includeSuperseded: false,
    };
    const text = 'where does the invoice go';
    const [embedding] = await core.embedder.embed([text], { kind: 'query' });
    const stats = await subjectStats(core, scope);
    const statements = await statementsOf(core, async (db) => {
      const part = { ...subjectPart(core, scope, stats, text, embedding as Float32Array, 5), db };
      const walked = await db.transaction().execute((trx) => vectorNeighbours({ ...part, db: trx, plan: 'hnsw' }));
      expect(walked.length).toBeGreaterThan(0);
      await vectorNeighbours({ ...part, plan: 'exact' });
      await candidatesQuery({ ...part, nearest: walked.map((r) => r.id) }).execute(db);
    });
    expectOnePartition('large scope', await explained(statements));
  });
});
