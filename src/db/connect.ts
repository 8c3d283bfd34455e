import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { Kysely, PGliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import { lockDataDir } from './data-dir-lock.js';
import { listenPostgres, type Unlisten } from './listen.js';
import { PreparingPostgresDialect, type PlanModePolicy } from './prepared-driver.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

export interface DbHandle {
  db: Db;
  engine: 'pglite' | 'postgres';
  close(): Promise<void>;
  /**
   * Hears the channel's NOTIFY payloads, which Postgres delivers once the notifying transaction
   * commits; absent on a read replica, where nothing is notified.
   */
  listen?(channel: string, onPayload: (payload: string | undefined) => void): Promise<Unlisten>;
  /** How its connections plan prepared statements (src/db/prepared-driver.ts); Postgres only. */
  plans?: PlanModePolicy;
}

// Counts and sequence numbers come back as strings from pg and as numbers from PGlite; timestamps
// as Date from both. Parsing int8 as a JS number is safe for the counts we read.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

/** DATABASE_URL's host, port, database and user, for messages; never its password. */
function describeUrl(url: string): { host: string; port: string; database: string; user: string } {
  try {
    const u = new URL(url);
    const user = decodeURIComponent(u.username) || 'postgres';
    const host = u.searchParams.get('host') ?? (u.hostname || 'localhost');
    return { host, port: u.port || '5432', database: decodeURIComponent(u.pathname.slice(1)) || user, user };
  } catch {
    return { host: 'localhost', port: '5432', database: '?', user: '?' };
  }
}

const errorCode = (error: unknown): string | undefined => {
  if (error instanceof AggregateError) return errorCode(error.errors[0]);
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
};

/**
 * The failures a newcomer meets when first pointing DATABASE_URL somewhere, as one line saying what
 * to do, instead of a driver stack trace. Undefined for anything else.
 */
export function connectionProblem(error: unknown, url: string): AppError | undefined {
  const { host, port, database, user } = describeUrl(url);
  const where = `PostgreSQL at ${host}:${port}`;
  switch (errorCode(error)) {
    case '3D000': // invalid_catalog_name
      return new AppError(
        'unavailable',
        `the database "${database}" of DATABASE_URL does not exist on ${where}; ` +
          `create it (createdb -h ${host} -p ${port} -U ${user} ${database}) or fix DATABASE_URL`,
      );
    case '28P01': // invalid_password
    case '28000': // invalid_authorization_specification (pg_hba.conf)
      return new AppError(
        'unavailable',
        `${where} refused user "${user}" for database "${database}": ${(error as Error).message}; ` +
          'check the user and password in DATABASE_URL',
      );
    case 'ECONNREFUSED':
      return new AppError(
        'unavailable',
        `nothing accepts connections at ${host}:${port} (DATABASE_URL); is PostgreSQL running there?`,
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new AppError('unavailable', `the host "${host}" of DATABASE_URL cannot be resolved`);
  }
  return undefined;
}

/** Where a pool reports a connection it lost; the process goes on without it. */
export type ConnectionLog = Pick<Logger, 'warn'>;

/**
 * A pool whose connections may each be lost at any time (the server restarts, an administrator or a
 * timeout ends the session) without taking the process down or being used again. pg-pool listens
 * for a client's errors only while the client is idle in the pool: one lost while checked out (a
 * statement under way, a transaction, a recall's pinned connection) emitted an 'error' event that
 * nothing listened for, and Node ended the process. Each client gets a listener of its own when it
 * connects, for its whole life; a client whose statement failed for its connection is discarded at
 * its release (src/db/prepared-driver.ts), and the next request opens a new connection: the service
 * recovers as soon as the server answers again.
 */
export function resilientPool(config: pg.PoolConfig, log: ConnectionLog | undefined): pg.Pool {
  // JIT off for every connection: recall's candidate statement is estimated expensive (thousands of
  // correlated lookups it never makes), crosses the JIT threshold, and compiling it took 130 ms of a
  // 20 ms recall. A statement per recall to turn it off cost a round trip; OLTP work never gains from JIT.
  const pool = new pg.Pool({ ...config, options: ['-c jit=off', config.options].filter(Boolean).join(' ') });
  // pg-pool has already removed an idle client that failed; its client listener below reports it.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    let reported = false;
    client.on('error', (error: Error) => {
      // A lost session says so twice or more (the server's FATAL message, then the closed socket).
      if (reported) return;
      reported = true;
      log?.warn({ err: error }, 'a database connection was lost; it is discarded and another opened when needed');
    });
  });
  return pool;
}

export async function openPostgres(url: string, poolSize: number, log?: ConnectionLog): Promise<DbHandle> {
  const pool = resilientPool({ connectionString: url, max: poolSize }, log);
  const plans: PlanModePolicy = { forceGeneric: true };
  const db = new Kysely<Database>({ dialect: new PreparingPostgresDialect(pool, plans) });
  // One round trip up front, so that a wrong DATABASE_URL is reported as such, in one line.
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    await db.destroy();
    throw connectionProblem(error, url) ?? error;
  }
  return {
    db,
    engine: 'postgres',
    plans,
    close: () => db.destroy(),
    listen: (channel, onPayload) => listenPostgres(url, channel, onPayload, log),
  };
}

/** How long a recall waits for a read replica's connection before it reads the primary instead. */
export const REPLICA_CONNECT_TIMEOUT_MS = 2_000;

/**
 * A read replica (DATABASE_READ_URL): a pool set up as the primary's (JIT off, prepared statements),
 * but opened without a round trip and with a connect timeout: a replica that is down must neither
 * stop a start nor hold a recall, which then reads the primary (src/db/read-replicas.ts).
 */
export function openReadReplica(url: string, poolSize: number, log?: ConnectionLog): DbHandle {
  const pool = resilientPool(
    { connectionString: url, max: poolSize, connectionTimeoutMillis: REPLICA_CONNECT_TIMEOUT_MS },
    log,
  );
  const plans: PlanModePolicy = { forceGeneric: true };
  const db = new Kysely<Database>({ dialect: new PreparingPostgresDialect(pool, plans) });
  return { db, engine: 'postgres', plans, close: () => db.destroy() };
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
    listen: async (channel, onPayload) => pglite.listen(channel, onPayload),
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
  log?: ConnectionLog;
}): Promise<DbHandle> {
  return options.databaseUrl
    ? openPostgres(options.databaseUrl, options.poolSize, options.log)
    : openPglite(options.dataDir);
}

/** Whether the database answers a trivial query now (for /readyz). */
export async function answers(db: Db): Promise<boolean> {
  return sql`SELECT 1`.execute(db).then(
    () => true,
    () => false,
  );
}

/**
 * Refreshes the planner's statistics. PGlite runs no autovacuum, so nothing else does there; without
 * them it cannot tell a subject's few rows from a tenant's many when choosing btree or HNSW.
 */
export async function analyze(db: Db): Promise<void> {
  await sql`ANALYZE`.execute(db);
}
