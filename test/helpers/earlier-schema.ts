import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import type { Db } from '../../src/db/connect.js';
import { splitStatements } from '../../src/db/migrate.js';

/**
 * Applies the migrations `wanted` keeps, in order, and records them as the runner does: a database
 * as an earlier release left it, for tests of the migration that came after.
 */
export async function applyMigrations(db: Db, wanted: (name: string) => boolean): Promise<void> {
  const dir = path.resolve('migrations');
  const names = (await fs.readdir(dir)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f) && wanted(f)).sort();
  await sql`CREATE TABLE schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`.execute(
    db,
  );
  for (const name of names) {
    for (const statement of splitStatements(await fs.readFile(path.join(dir, name), 'utf8'))) {
      await sql.raw(statement).execute(db);
    }
    await sql`INSERT INTO schema_migrations (name) VALUES (${name})`.execute(db);
  }
}
