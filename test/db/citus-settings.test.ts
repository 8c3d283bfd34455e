import { sql, type KyselyPlugin } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { detectCitus, onCitus, withCitus } from '../../src/db/citus.js';
import type { Db } from '../../src/db/connect.js';
import { vectorNeighbours } from '../../src/retrieval/queries/nearest.js';
import type { RecallScope } from '../../src/retrieval/queries/scope.js';
import { testDatabaseIsCitus } from '../helpers/citus.js';
import { engine, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { createAnchor, storeMemory } from '../helpers/store-recall.js';

/**
 * Without a Citus cluster here, the Citus path is proved by what it sends: the handle is marked as
 * Citus (as start-up marks it when it finds the extension) on this plain engine, and the statements
 * of an HNSW neighbour search are recorded. Plain Postgres and PGlite accept the
 * citus.propagate_set_commands line as a placeholder setting, so the statements really run, and the
 * settings they make are read back. The suite gated on CITUS_TEST_URL (test/citus) shows on a
 * cluster what goes wrong without them.
 */

/** Records the SQL of every statement run through the returned handle (and its transactions). */
function recording(db: Db): { db: Db; statements: string[] } {
  const statements: string[] = [];
  const recorder: KyselyPlugin = {
    transformQuery: (args) => {
      statements.push(db.getExecutor().compileQuery(args.node, args.queryId).sql);
      return args.node;
    },
    transformResult: (args) => Promise.resolve(args.result),
  };
  return { db: db.withPlugin(recorder), statements };
}

const FACTS = [
  'Ines prefers morning appointments',
  'Ines is allergic to penicillin',
  'Ines lives near the harbour',
  'Ines works night shifts at the hospital',
  'Ines has a dog called Pepper',
];

// On a real cluster test/citus shows the same on the workers; this needs a database without Citus.
const citus = await testDatabaseIsCitus();

describe.skipIf(citus)(`Citus settings forwarded to the workers, on ${engine}`, () => {
  let api: TestApi;
  let tenant: Tenant;
  let scope: RecallScope;
  let query: Float32Array;

  beforeAll(async () => {
    api = await testApi();
    tenant = await newTenant(api);
    const anchorId = await createAnchor(api, tenant.auth, 'ines');
    for (const content of FACTS) {
      await storeMemory(api, tenant.auth, { agent_id: 'nurse', anchor_external_id: 'ines', content });
    }
    scope = { tenantId: tenant.tenantId, agentId: 'nurse', anchorId, sessionId: null, includeSuperseded: false };
    [query] = (await api.core.embedder.embed(['which medicine must we avoid'])) as [Float32Array];
  });

  /** An HNSW neighbour search as recall runs one (in a transaction), recorded, with the settings it left in force. */
  async function hnswSearch(db: Db) {
    const recorded = recording(db);
    const dimensions = api.core.embedder.dimensions;
    const { rows, settings } = await recorded.db.transaction().execute(async (trx) => {
      const found = await vectorNeighbours({
        db: trx,
        dimensions,
        scope,
        part: 'subject',
        embedding: query,
        depth: 10,
        plan: 'hnsw',
      });
      const read = await sql<{ propagate: string | null; ef_search: string; iterative_scan: string }>`
        SELECT current_setting('citus.propagate_set_commands', true) AS propagate,
          current_setting('hnsw.ef_search') AS ef_search, current_setting('hnsw.iterative_scan') AS iterative_scan`.execute(
        trx,
      );
      return { rows: found, settings: read.rows[0] };
    });
    const sent = recorded.statements.filter((s) => !s.includes('current_setting'));
    return { rows, settings, sent };
  }

  it('finds no Citus here, and a marked handle stays marked in its transactions', async () => {
    expect(await detectCitus(api.core.db)).toBe(false);
    expect(onCitus(api.core.db)).toBe(false);
    const marked = withCitus(api.core.db);
    expect(onCitus(marked)).toBe(true);
    expect(await marked.transaction().execute((trx) => Promise.resolve(onCitus(trx)))).toBe(true);
  });

  it('on Citus, sends SET LOCAL statements after enabling their propagation, and they take effect', async () => {
    const { rows, settings, sent } = await hnswSearch(withCitus(api.core.db));
    expect(sent.slice(0, 4)).toEqual([
      "SET LOCAL citus.propagate_set_commands = 'local'",
      "SET LOCAL hnsw.iterative_scan = 'relaxed_order'",
      "SET LOCAL hnsw.ef_search = '400'",
      "SET LOCAL enable_sort = 'off'",
    ]);
    expect(sent[4]).toMatch(/^with "scoped"|select/i);
    expect(sent.at(-1)).toBe("SET LOCAL enable_sort = 'on'");
    // Citus forwards SET LOCAL statements only: a set_config call would stay on the coordinator.
    expect(sent.filter((s) => s.includes('set_config'))).toEqual([]);
    expect(settings).toEqual({ propagate: 'local', ef_search: '400', iterative_scan: 'relaxed_order' });
    expect(rows).toHaveLength(FACTS.length);
  });

  it('elsewhere, sends the settings in one statement and nothing about Citus, with the same neighbours', async () => {
    const plain = await hnswSearch(api.core.db);
    const citus = await hnswSearch(withCitus(api.core.db));
    expect(plain.sent[0]).toMatch(/^SELECT set_config\('hnsw\.iterative_scan', 'relaxed_order', true\), set_config/);
    expect(plain.sent.filter((s) => s.includes('citus'))).toEqual([]);
    // Unset, or empty on a connection that ran the marked search before: a placeholder outlives its SET LOCAL.
    expect(plain.settings?.propagate ?? '').toBe('');
    expect(plain.settings).toMatchObject({ ef_search: '400', iterative_scan: 'relaxed_order' });
    expect(plain.rows.map((r) => r.id)).toEqual(citus.rows.map((r) => r.id));
  });
});
