import { sql } from 'kysely';
import { pino } from 'pino';
import { openDatabase, type Db } from '../../src/db/connect.js';
import { readMigrations, splitStatements } from '../../src/db/migrate.js';
import type { Embedder } from '../../src/embedding/embedder.js';
import { startCore, type Running } from '../../src/start-core.js';
import { testConfig } from './harness.js';
import { isolatedDatabase, type IsolatedDb } from './isolated-db.js';

/**
 * Applies the migrations `wanted` keeps, in order, and records them as the runner does: a database
 * as an earlier release left it, for tests of the migration that came after.
 */
export async function applyMigrations(db: Db, wanted: (name: string) => boolean): Promise<void> {
  await sql`CREATE TABLE schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`.execute(
    db,
  );
  for (const m of (await readMigrations()).filter((x) => wanted(x.name))) {
    for (const statement of splitStatements(m.sql)) await sql.raw(statement).execute(db);
    await sql`INSERT INTO schema_migrations (name) VALUES (${m.name})`.execute(db);
  }
}

/**
 * An isolated database as an earlier release left it (the migrations `wanted` keeps, then what
 * `seed` writes), started: the start applies the migrations left out.
 */
export async function startedAfter(
  wanted: (name: string) => boolean,
  seed: (db: Db) => Promise<void>,
  embedder: Embedder,
): Promise<{ iso: IsolatedDb; running: Running }> {
  const iso = await isolatedDatabase();
  const config = testConfig(iso.env);
  const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
  try {
    await applyMigrations(handle.db, wanted);
    await seed(handle.db);
  } finally {
    await handle.close();
  }
  return { iso, running: await startCore(config, { embedder, log: pino({ level: 'silent' }) }) };
}
