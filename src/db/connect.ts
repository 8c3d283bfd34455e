import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { Kysely, PGliteDialect, PostgresDialect } from 'kysely';
import pg from 'pg';
import { lockDataDir } from './data-dir-lock.js';
import { isPrepared, statementName } from './prepared.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

export interface DbHandle {
  db: Db;
  engine: 'pglite' | 'postgres';
  close(): Promise<void>;
}

// Counts and sequence numbers come back as strings from pg and as numbers from PGlite; timestamps
// as Date from both. Parsing int8 as a JS number is safe for the counts we read.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export function openPostgres(url: string, poolSize: number): Promise<DbHandle> {
  // JIT off for every connection: recall's candidate statement is estimated expensive (thousands of
  // correlated lookups it never makes), crosses the JIT threshold, and compiling it took 130 ms of a
  // 20 ms recall. A statement per recall to turn it off cost a round trip; OLTP work never gains from JIT.
  const pool = new pg.Pool({ connectionString: url, max: poolSize, options: '-c jit=off' });
  // An idle client that loses its server must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  pool.on('connect', runMarkedAsPrepared);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return Promise.resolve({ db, engine: 'postgres', close: () => db.destroy() });
}

type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/**
 * Kysely sends every statement as text and values; a statement marked by src/db/prepared.ts goes
 * to pg as a named one instead, which pg prepares once per connection and then only binds.
 */
function runMarkedAsPrepared(client: pg.PoolClient): void {
  const query = client.query.bind(client) as Query;
  const patched: Query = (config, values, callback) =>
    typeof config === 'string' && isPrepared(config)
      ? query({ name: statementName(config), text: config }, values, callback)
      : query(config, values, callback);
  client.query = patched as typeof client.query;
}

export async function openPglite(dataDir: string): Promise<DbHandle> {
  const inMemory = dataDir === ':memory:';
  const unlock = inMemory ? () => undefined : lockDataDir(dataDir);
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(inMemory ? undefined : dataDir, { extensions: { vector } });
  } catch (error) {
    unlock();
    throw error;
  }
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) });
  return {
    db,
    engine: 'pglite',
    // Kysely's destroy closes the PGlite instance it was given; the folder is free once it has.
    close: async () => {
      try {
        await db.destroy();
      } finally {
        unlock();
      }
    },
  };
}

export function openDatabase(options: {
  databaseUrl: string | undefined;
  dataDir: string;
  poolSize: number;
}): Promise<DbHandle> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options.poolSize) : openPglite(options.dataDir);
}
