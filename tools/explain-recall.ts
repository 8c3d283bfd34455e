/**
 * EXPLAIN (ANALYZE, BUFFERS) of the two statements that make a large scope's recall on Postgres: the
 * vector side's HNSW walk (src/retrieval/queries/nearest.ts, with recall's settings) and the lexical
 * side with the candidates' context (src/retrieval/queries/candidates.ts), for the big agent's
 * private memories (or a subject) of a bench:scale dataset. The database is only read, never
 * migrated, so that a dataset of an earlier schema can be explained beside a later one with the same
 * statements (their text is in test/retrieval/__sql__).
 *
 *   DATABASE_URL=postgres://… npx tsx tools/explain-recall.ts [--subject EXTERNAL_ID] [--queries 3] [--seed 7] [--plans]
 *
 * Prints, per query and statement, the execution time, the shared buffers hit and read, and with
 * --plans the whole plan.
 */
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/connect.js';
import { unitKeys } from '../src/db/scope-stats.js';
import { enableIterativeScan } from '../src/db/vector.js';
import { createHashEmbedder } from '../src/embedding/hash.js';
import { candidatesQuery } from '../src/retrieval/queries/candidates.js';
import { nearestQuery } from '../src/retrieval/queries/nearest.js';
import { scopeUnits, type RecallScope } from '../src/retrieval/queries/scope.js';
import { AGENT_BIG, AGENT_READER, orgName } from './bench-scale/plan.js';
import { prng, query } from './bench-scale/text.js';

const { values } = parseArgs({
  options: {
    subject: { type: 'string' },
    queries: { type: 'string', default: '3' },
    seed: { type: 'string', default: '7' },
    dims: { type: 'string', default: '256' },
    plans: { type: 'boolean', default: false },
  },
});
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('DATABASE_URL: the Postgres database of a bench:scale dataset');
const dimensions = Number(values.dims);
const embedder = createHashEmbedder(dimensions);
const depth = 20;

const handle = await openDatabase({ databaseUrl, dataDir: '', poolSize: 1 });
const db = handle.db;
try {
  const tenant = await db
    .selectFrom('tenants')
    .select('id')
    .where('org_name', '=', orgName(0))
    .executeTakeFirstOrThrow();
  const anchor = values.subject
    ? await db
        .selectFrom('entities')
        .select('id')
        .where('tenant_id', '=', tenant.id)
        .where('external_id', '=', values.subject)
        .executeTakeFirstOrThrow()
    : undefined;
  const scope: RecallScope = {
    tenantId: tenant.id,
    agentId: anchor ? AGENT_READER : AGENT_BIG,
    anchorId: anchor?.id ?? null,
    sessionId: null,
    includeSuperseded: false,
    now: new Date(),
  };
  const units = scopeUnits(scope, 'subject');
  const { rows } = await sql<{ docs: number; total_len: number }>`
    SELECT coalesce(sum(docs), 0)::float8 AS docs, coalesce(sum(total_len), 0)::float8 AS total_len
    FROM memory_unit_stats WHERE tenant_id = ${tenant.id} AND unit = ANY (${unitKeys(units)})`.execute(db);
  const stats = { docs: rows[0]?.docs ?? 0, totalLen: rows[0]?.total_len ?? 0 };
  const partitioned = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'memories'::regclass`.execute(db);
  process.stdout.write(
    `scope: ${values.subject ?? `${AGENT_BIG} (private)`}, ${stats.docs} memories; memories has ${partitioned.rows[0]?.n ?? 0} partitions\n`,
  );

  const random = prng(Number(values.seed));
  for (let i = 0; i < Number(values.queries); i++) {
    const text = query(random);
    const [embedding] = await embedder.embed([text]);
    const part = {
      db,
      dimensions,
      scope,
      part: 'subject' as const,
      stats,
      text,
      embedding: embedding as Float32Array,
      depth,
    };
    const explain = async (label: string, compiled: { sql: string; parameters: readonly unknown[] }, hnsw: boolean) =>
      db.transaction().execute(async (trx) => {
        if (hnsw) await enableIterativeScan(trx, true);
        const result = await trx.executeQuery<{ 'QUERY PLAN': unknown }>({
          ...compiled,
          sql: `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${compiled.sql}`,
          query: { kind: 'RawNode' } as never,
          queryId: { queryId: `explain-${label}` },
        });
        const raw = result.rows[0]?.['QUERY PLAN'];
        const doc = (typeof raw === 'string' ? JSON.parse(raw) : raw) as {
          Plan: Record<string, unknown>;
          'Execution Time': number;
          'Planning Time': number;
        }[];
        const top = doc[0] as (typeof doc)[0];
        const plan = top.Plan;
        process.stdout.write(
          `  ${label}: ${top['Execution Time'].toFixed(1)} ms (planning ${top['Planning Time'].toFixed(1)} ms), ` +
            `shared buffers hit ${String(plan['Shared Hit Blocks'])}, read ${String(plan['Shared Read Blocks'])}\n`,
        );
        if (values.plans) {
          const text = await trx.executeQuery<{ 'QUERY PLAN': string }>({
            ...compiled,
            sql: `EXPLAIN (ANALYZE, BUFFERS) ${compiled.sql}`,
            query: { kind: 'RawNode' } as never,
            queryId: { queryId: `explain-text-${label}` },
          });
          process.stdout.write(`${text.rows.map((r) => `    ${r['QUERY PLAN']}`).join('\n')}\n`);
        }
        return [];
      });
    process.stdout.write(`query "${text}":\n`);
    const nearest = nearestQuery(part).compile();
    await explain('nearest (HNSW)', nearest, true);
    const ids = await db.transaction().execute(async (trx) => {
      await enableIterativeScan(trx, true);
      return (await nearestQuery({ ...part, db: trx }).execute()).map((r) => r.id);
    });
    await explain(
      'candidates (lexical side and context)',
      candidatesQuery({ ...part, nearest: ids }).compile(db),
      false,
    );
  }
} finally {
  await handle.close();
}
