import { sql } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropVectorIndex, ensureVectorIndex, vectorIndexDimensions } from '../../src/db/vector.js';
import type { Actor } from '../../src/domain/core.js';
import { storeMemory } from '../../src/domain/store/store.js';
import { createTenant } from '../../src/domain/tenancy/tenants.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { startCore, type Running } from '../../src/start-core.js';
import { engine, testConfig } from '../helpers/harness.js';
import { isolatedDatabase, type IsolatedDb } from '../helpers/isolated-db.js';

/**
 * After `reembed` rewrites every vector to a new size, the old versions of the rows stay visible to
 * any snapshot taken before, and CREATE INDEX must index them too: their cast to the new size fails.
 * PGlite has one connection, so no other snapshot can exist there.
 */
describe.skipIf(engine !== 'postgres')('building the vector index after vectors change size', () => {
  let iso: IsolatedDb;
  let running: Running;

  beforeAll(async () => {
    iso = await isolatedDatabase();
    running = await startCore(testConfig(iso.env), {
      embedder: createHashEmbedder(32),
      log: pino({ level: 'silent' }),
    });
    const { core } = running;
    const tenant = await createTenant(core, 'vector-index-org');
    const actor: Actor = { tenantId: tenant.tenantId, keyId: tenant.keyId, scopes: new Set(['admin']) };
    for (const content of ['Ada likes tea', 'Ada lives in Lisbon', 'Ada plays the cello'])
      await storeMemory(core, actor, { agentId: 'a', content, anchor: { anchorExternalId: 'ada' } });
  });

  afterAll(async () => {
    await running.close();
    await iso.drop();
  });

  it('waits for an older snapshot to let go of the previous size, then builds it', async () => {
    const db = running.core.db;
    // A reader whose snapshot predates the rewrite, as an autovacuum ANALYZE's would.
    const reader = new pg.Client({ connectionString: iso.env.DATABASE_URL });
    await reader.connect();
    await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    // A snapshot, and no lock on the table (the index is dropped and rebuilt under the reader's nose).
    await reader.query('SELECT 1');
    await dropVectorIndex(db, 32);
    // New contents too, so the full-text index changes and no new version is a HOT update (CREATE
    // INDEX skips dead HOT versions; reembed's rows are often too large to update in place anyway).
    await sql`UPDATE memories SET embedding = array_fill(0.5, ARRAY[16])::vector, embedder = 'hash:16',
      content = content || ' rewritten'`.execute(db);

    let released = false;
    const release = setTimeout(() => {
      released = true;
      void reader.query('COMMIT').finally(() => reader.end());
    }, 1500);
    try {
      await db.transaction().execute((trx) => ensureVectorIndex(trx, 16, 100));
    } finally {
      clearTimeout(release);
      if (!released) await reader.end();
    }
    expect(released).toBe(true);
    expect(await vectorIndexDimensions(db)).toEqual([16]);
  });
});
