import { CompiledQuery, PostgresDialect, PostgresDriver, type DatabaseConnection, type QueryResult } from 'kysely';
import type pg from 'pg';
import { outageError } from '../errors.js';
import { preparedName } from './prepared.js';

/** How a prepared statement is planned (src/db/prepared.ts), and how every other one is. */
export const PREPARED_PLAN_MODE = 'SET plan_cache_mode = force_generic_plan';
export const DEFAULT_PLAN_MODE = 'RESET plan_cache_mode';

/**
 * Whether prepared statements get generic plans on this database. Forced on plain Postgres (below);
 * not on Citus, whose planner cannot prune shards in a generic plan of a statement with CTEs, LATERAL
 * or a second table ("could not create distributed plan") and plans a statement that names one
 * tenant as a one-task router query when given its values. Start-up learns which database it is
 * after the pool exists, hence a setting the connections read at each statement.
 */
export interface PlanModePolicy {
  forceGeneric: boolean;
}

/**
 * Kysely's Postgres dialect, whose connections send a statement compiled with prepared()
 * (src/db/prepared.ts) to pg as a named one, `{ name, text, values }`, which pg prepares once per
 * connection and then only binds; every other statement goes as text and values. Left to choose,
 * Postgres planned recall's statements anew for their values on every bind all the same (300 custom
 * plans in 300 recalls, ~1 ms of its CPU per recall), so each connection carries its plan mode:
 * generic plans forced for prepared statements, Postgres' choice for every other one. It switches
 * only when the kind of statement changes, which a run of recalls never does; pg sends a client's
 * queries one after another in the order given, so the switch goes ahead unawaited. Every pool of
 * ours runs on it, so that a connection lost under a statement is never handed out again.
 */
export class PreparingPostgresDialect extends PostgresDialect {
  readonly #pool: pg.Pool;
  readonly #policy: PlanModePolicy;

  constructor(pool: pg.Pool, policy: PlanModePolicy = { forceGeneric: true }) {
    super({ pool });
    this.#pool = pool;
    this.#policy = policy;
  }

  override createDriver(): PostgresDriver {
    return new PreparingPostgresDriver(this.#pool, this.#policy);
  }
}

/** Kysely's driver (transactions, savepoints) over PlanModeConnection. */
class PreparingPostgresDriver extends PostgresDriver {
  readonly #pool: pg.Pool;
  readonly #policy: PlanModePolicy;
  readonly #connections = new WeakMap<pg.PoolClient, PlanModeConnection>();

  constructor(pool: pg.Pool, policy: PlanModePolicy) {
    super({ pool });
    this.#pool = pool;
    this.#policy = policy;
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const client = await this.#pool.connect();
    let connection = this.#connections.get(client);
    if (!connection) {
      connection = new PlanModeConnection(client, this.#policy);
      this.#connections.set(client, connection);
    }
    return connection;
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    // A connection lost mid-transaction has nothing to roll back (the server did when the session
    // ended): the transaction's own error is the one to report, not a failed ROLLBACK's.
    if ((connection as PlanModeConnection).discarded) return;
    try {
      await connection.executeQuery(CompiledQuery.raw('rollback'));
    } catch (error) {
      // A connection that cannot roll back is in an unknown state: the pool must not hand it out again.
      (connection as PlanModeConnection).discard();
      throw error;
    }
  }

  override releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as PlanModeConnection).release();
    return Promise.resolve();
  }
}

class PlanModeConnection implements DatabaseConnection {
  readonly #client: pg.PoolClient;
  readonly #policy: PlanModePolicy;
  #generic = false;
  #discarded = false;

  constructor(client: pg.PoolClient, policy: PlanModePolicy) {
    this.#client = client;
    this.#policy = policy;
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    if (this.#discarded) throw new Error('Postgres connection has been discarded');
    const name = preparedName(compiled);
    this.#switchTo(name !== undefined && this.#policy.forceGeneric);
    const values = [...compiled.parameters];
    let result: pg.QueryResult;
    try {
      result = await (name === undefined
        ? this.#client.query(compiled.sql, values)
        : this.#client.query({ name, text: compiled.sql, values }));
    } catch (error) {
      // The server's FATAL message (a shutdown, pg_terminate_backend, an idle-in-transaction timeout)
      // reaches the statement before the socket closes: released as sound in between, the client
      // would go back to the pool and fail the next statement too. Discarded, it is closed instead.
      if (outageError(error)) this.discard();
      throw error;
    }
    const { command, rowCount, rows } = result;
    // As Kysely's own connection answers them: its driver reads a COMMIT turned ROLLBACK so.
    if (command === 'ROLLBACK' || command === 'COMMIT') return { rows: [{ command }] as R[] };
    const changed = command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
    return { numAffectedRows: changed ? BigInt(rowCount ?? 0) : undefined, rows: (rows ?? []) as R[] };
  }

  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not configured for this dialect (no cursor)');
  }

  get discarded(): boolean {
    return this.#discarded;
  }

  discard(): void {
    this.#discarded = true;
  }

  release(): void {
    this.#client.release(this.#discarded);
  }

  #switchTo(generic: boolean): void {
    if (this.#generic === generic) return;
    this.#generic = generic;
    // Its failure, if any, is the next statement's to report: the connection is what failed.
    this.#client.query(generic ? PREPARED_PLAN_MODE : DEFAULT_PLAN_MODE).catch(() => undefined);
  }
}
