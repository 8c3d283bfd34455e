import { Kysely } from 'kysely';
import { resilientPool, type ConnectionLog, type DbHandle } from './connect.js';
import { PreparingPostgresDialect, type PlanModePolicy } from './prepared-driver.js';
import type { Database } from './schema.js';

/**
 * Backstops on the server's side, should the process fail to end an export: no export statement
 * runs this long, and no export transaction waits this long between two (an export writes its
 * records to a file, never to the client, between statements).
 */
const EXPORT_STATEMENT_TIMEOUT_MS = 10 * 60_000;
const EXPORT_IDLE_IN_TRANSACTION_MS = 60_000;

/**
 * The tenant exports' own small pool on Postgres: an export holds a connection in a REPEATABLE READ
 * transaction for as long as it reads, and exports of large tenants must never take the
 * connections that every other request needs. Its size is EXPORT_CONCURRENCY, the most exports
 * that run at once; opened without a round trip, it connects on an export's first statement.
 */
export function openExportPool(url: string, size: number, log?: ConnectionLog): DbHandle {
  // A pool of the primary's kind: a connection lost mid-export (the idle timeout below ends it so)
  // fails that export's next statement, never the process, and is not used again.
  const pool = resilientPool(
    {
      connectionString: url,
      max: size,
      options:
        `-c statement_timeout=${EXPORT_STATEMENT_TIMEOUT_MS}` +
        ` -c idle_in_transaction_session_timeout=${EXPORT_IDLE_IN_TRANSACTION_MS}`,
    },
    log,
  );
  const plans: PlanModePolicy = { forceGeneric: true };
  const db = new Kysely<Database>({ dialect: new PreparingPostgresDialect(pool, plans) });
  return { db, engine: 'postgres', plans, close: () => db.destroy() };
}
