import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { ActionableError } from '../errors.js';
import { detectCitus } from './citus.js';
import type { Db } from './connect.js';
import { dropVectorIndex, ensureVectorIndex, vectorIndexDimensions, type EmbedderIdentity } from './vector.js';

// Both src/db (tests) and dist/db (built) sit two levels below the package root.
const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');

// Any fixed 64-bit number; every process that migrates this database takes the same lock.
export const MIGRATION_LOCK_KEY = 7_214_003_118_505_001;

export class EmbedderMismatchError extends ActionableError {}

/**
 * A migration whose first line is this is recorded without running on Citus: 0017 partitions
 * `memories` by tenant on one node, which Citus already does by spreading it over its shards.
 */
const NOT_ON_CITUS = /^-- migrate: not on citus\s*$/m;

/** Whether a migration runs on a Citus cluster (see NOT_ON_CITUS). */
export function runsOnCitus(text: string): boolean {
  const first = text.split('\n', 1)[0] ?? '';
  return !NOT_ON_CITUS.test(first);
}

/** The migration files, in the order they apply. */
export async function readMigrations(): Promise<{ name: string; sql: string }[]> {
  const files = (await fs.readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (name) => ({ name, sql: await fs.readFile(path.join(MIGRATIONS_DIR, name), 'utf8') })),
  );
}

/**
 * Both drivers send one statement per prepared query, so a file is split at semicolons that end a
 * line. Migrations must therefore not use dollar-quoted bodies ($$), which could hold such a line.
 */
export function splitStatements(text: string): string[] {
  if (text.includes('$$')) throw new Error('migrations must not contain dollar-quoted bodies');
  const withoutComments = text.replace(/--[^\n]*$/gm, '');
  return withoutComments
    .split(/;\s*$/m)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/**
 * Applies pending migrations in order, then makes sure the vector index matches the configured
 * embedder, all under one transaction-scoped advisory lock so concurrent starts take turns.
 * Returns the names of the migrations it applied.
 */
export async function migrate(db: Db, embedder?: EmbedderIdentity): Promise<string[]> {
  const migrations = await readMigrations();
  return db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${sql.raw(String(MIGRATION_LOCK_KEY))})`.execute(trx);
    await sql`CREATE TABLE IF NOT EXISTS schema_migrations (
      name text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`.execute(trx);
    const done = await sql<{ name: string }>`SELECT name FROM schema_migrations`.execute(trx);
    const applied = new Set(done.rows.map((r) => r.name));
    const ran: string[] = [];
    let citus: boolean | undefined;
    for (const m of migrations) {
      if (applied.has(m.name)) continue;
      citus ??= await prepareForCitus(trx);
      if (!citus || runsOnCitus(m.sql)) {
        for (const statement of splitStatements(m.sql)) await sql.raw(statement).execute(trx);
      }
      await sql`INSERT INTO schema_migrations (name) VALUES (${m.name})`.execute(trx);
      ran.push(m.name);
    }
    if (embedder) await checkEmbedder(trx, embedder);
    return ran;
  });
}

/**
 * What migrations need on Citus, for their transaction only (elsewhere nothing is sent):
 * `citus.enable_unsafe_triggers`, without which creating or dropping a trigger of a distributed
 * table (0010 makes the statistics' update trigger again) is refused, as Citus cannot tell whether a
 * trigger's body stays on its shard; ours do, every statement of them naming the firing row's
 * tenant, whose rows of every table are colocated (migration 0016). And shard commands one
 * connection at a time: Citus refuses to change a function (0016) in a transaction that has already
 * written shards over parallel connections (0011's UPDATE). Returns whether the database is Citus.
 */
async function prepareForCitus(trx: Db): Promise<boolean> {
  if (!(await detectCitus(trx))) return false;
  await sql`SET LOCAL citus.enable_unsafe_triggers = on`.execute(trx);
  await sql`SET LOCAL citus.multi_shard_modify_mode = 'sequential'`.execute(trx);
  return true;
}

/**
 * A deployment never mixes vectors of two embedders: if stored memories were embedded by another
 * model, starting would silently rank garbage, so refuse instead.
 */
async function checkEmbedder(trx: Db, embedder: EmbedderIdentity): Promise<void> {
  const other = await trx
    .selectFrom('memories')
    .select('embedder')
    .where('embedder', '<>', embedder.id)
    .limit(1)
    .executeTakeFirst();
  if (other) {
    throw new EmbedderMismatchError(
      `stored memories were embedded with "${other.embedder}" but EMBEDDER is configured as "${embedder.id}"; ` +
        `run \`agent-memory reembed\` to re-embed them with the configured one, or configure the embedder the data was made with`,
    );
  }
  await trx
    .insertInto('service_settings')
    .values({ key: 'embedder', value: JSON.stringify({ id: embedder.id, dimensions: embedder.dimensions }) })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        value: JSON.stringify({ id: embedder.id, dimensions: embedder.dimensions }),
      }),
    )
    .execute();
  // Every stored vector is the configured embedder's now, so an index of another size covers none
  // of them and would refuse every new one (a database migrated with the default embedder, then
  // started with another of another size): it goes.
  for (const d of await vectorIndexDimensions(trx)) if (d !== embedder.dimensions) await dropVectorIndex(trx, d);
  await ensureVectorIndex(trx, embedder.dimensions);
}
