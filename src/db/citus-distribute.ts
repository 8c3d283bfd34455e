import { sql } from 'kysely';
import { ActionableError } from '../errors.js';
import type { Db } from './connect.js';
import { detectCitus } from './citus.js';
import { MIGRATION_LOCK_KEY } from './migrate.js';
import { TABLES } from './schema.js';

/**
 * `agent-memory migrate --citus`: after the migrations, distributes the schema over a Citus
 * cluster by tenant (docs/scale-out.md#citus). Safe to run again: it only touches what is not yet
 * distributed, so it also takes in the tables of a later migration.
 */

/**
 * Copied to every node: tables without a tenant, and the ones read before the tenant is known.
 * tenants must be one for its unique lower(org_name) to hold across the cluster; api_key_tenants
 * so that authentication learns a key's tenant without asking every shard.
 */
export const REFERENCE_TABLES = ['tenants', 'service_settings', 'api_key_tenants'] as const;

/**
 * Hash-distributed by tenant_id, all in one colocation group, so a tenant's rows of every table sit
 * on one node and every join, foreign key, trigger and transaction of a request stays on it. The
 * first names the group.
 */
export const DISTRIBUTED_TABLES = [
  'api_keys',
  'entities',
  'sessions',
  'memories',
  'memory_mentions',
  'audit_events',
  'ingested_messages',
  'memory_unit_stats',
  'memory_term_stats',
  'jobs',
  'job_inputs',
  'webhook_endpoints',
  'webhook_deliveries',
] as const;

/**
 * Functions the workers need that Citus cannot find by itself. Citus sends a distributed table's
 * trigger functions along with its triggers, but not what a function's body calls: the statistics
 * triggers of memories (migration 0006) call this one on the shards.
 */
const CALLED_FUNCTIONS = ['memory_stats_unit(text, text, uuid, uuid)'] as const;

/**
 * Tables whose triggers count their rows into other tables (the statistics of migration 0006).
 * Citus copies a table's rows into its shards with the shards' triggers in place, so the counters,
 * already right and copied themselves, would be counted again (or, distributed after, be missing on
 * the worker and fail the copy): their triggers are off while the table is distributed.
 */
const COUNTED_TABLES: readonly string[] = ['memories'];

export interface ForeignKey {
  table: string;
  name: string;
  /** As pg_get_constraintdef prints it: `FOREIGN KEY (…) REFERENCES …`. */
  definition: string;
  references: string;
}

export interface DistributionState {
  /** Tables already distributed or reference tables (pg_dist_partition). */
  done: ReadonlySet<string>;
  foreignKeys: readonly ForeignKey[];
}

const ident = (name: string): string => `"${name.replaceAll('"', '""')}"`;
const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/**
 * The statements, in the order that works: Citus cannot distribute a table that a local table
 * still references, nor one whose foreign keys point at a local table, so the foreign keys between
 * tables still to be distributed are dropped first, every table is distributed (reference tables
 * first, as the others point at them), and the same foreign keys are added back. Every key leads
 * with tenant_id, so each is between colocated shards or towards a reference table, which Citus
 * enforces. Empty when everything is distributed.
 */
export function distributionPlan(state: DistributionState): string[] {
  const pendingReference = REFERENCE_TABLES.filter((t) => !state.done.has(t));
  const pendingDistributed = DISTRIBUTED_TABLES.filter((t) => !state.done.has(t));
  const pending = new Set<string>([...pendingReference, ...pendingDistributed]);
  if (pending.size === 0) return [];
  const moved = state.foreignKeys.filter((fk) => pending.has(fk.table) || pending.has(fk.references));
  const [group] = DISTRIBUTED_TABLES;
  return [
    ...moved.map((fk) => `ALTER TABLE ${ident(fk.table)} DROP CONSTRAINT ${ident(fk.name)}`),
    ...CALLED_FUNCTIONS.map((f) => `SELECT create_distributed_function(${literal(f)})`),
    ...pendingReference.map((t) => `SELECT create_reference_table(${literal(t)})`),
    ...pendingDistributed.flatMap((t) => {
      const create =
        t === group
          ? `SELECT create_distributed_table(${literal(t)}, 'tenant_id')`
          : `SELECT create_distributed_table(${literal(t)}, 'tenant_id', colocate_with => ${literal(group)})`;
      return COUNTED_TABLES.includes(t)
        ? [`ALTER TABLE ${ident(t)} DISABLE TRIGGER USER`, create, `ALTER TABLE ${ident(t)} ENABLE TRIGGER USER`]
        : [create];
    }),
    ...moved.map((fk) => `ALTER TABLE ${ident(fk.table)} ADD CONSTRAINT ${ident(fk.name)} ${fk.definition}`),
    // Citus copies a table's rows into its shards and leaves the coordinator's own copy in place,
    // unread by queries but checked by a later migration's ALTER TABLE (0011's SET NOT NULL failed
    // on rows its UPDATE had filled on the shards only).
    ...[...pendingReference, ...pendingDistributed].map(
      (t) => `SELECT truncate_local_data_after_distributing_table(${literal(t)})`,
    ),
  ];
}

/** The foreign keys among the schema's tables, as the catalog holds them. */
export async function readForeignKeys(db: Db): Promise<ForeignKey[]> {
  const { rows } = await sql<ForeignKey>`
    SELECT c.conrelid::regclass::text AS table, c.conname AS name,
      pg_get_constraintdef(c.oid) AS definition, c.confrelid::regclass::text AS references
    FROM pg_constraint AS c
    WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace
      -- A key's copies on partitions (of a partitioned memories, migration 0017) come and go with it.
      AND c.conparentid = 0
    ORDER BY 1, 2`.execute(db);
  return rows;
}

/** Tables already distributed or made reference tables. */
async function readDistributed(db: Db): Promise<Set<string>> {
  const { rows } = await sql<{ table: string }>`
    SELECT logicalrelid::regclass::text AS table FROM pg_dist_partition`.execute(db);
  return new Set(rows.map((r) => r.table));
}

/** Every table of the schema must be placed; a table added by a migration and not listed here would stay on the coordinator. */
export function unplacedTables(): string[] {
  const placed = new Set<string>([...REFERENCE_TABLES, ...DISTRIBUTED_TABLES]);
  return Object.keys(TABLES).filter((t) => !placed.has(t));
}

export class NotCitusError extends ActionableError {}

/**
 * Distributes what is not yet distributed, in one transaction under the migration lock, so that
 * a failure leaves the schema as it was and no start migrates meanwhile. Returns the statements run.
 */
export async function distributeForCitus(db: Db): Promise<string[]> {
  if (!(await detectCitus(db))) {
    throw new NotCitusError(
      'the database has no citus extension: run CREATE EXTENSION citus on the coordinator and add the ' +
        'workers (citus_add_node) first, or run migrate without --citus on a single Postgres',
    );
  }
  const unplaced = unplacedTables();
  if (unplaced.length > 0) throw new Error(`tables without a Citus placement: ${unplaced.join(', ')}`);
  const plan = await db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${sql.raw(String(MIGRATION_LOCK_KEY))})`.execute(trx);
    // Distributing, then adding foreign keys towards reference tables in one transaction needs the
    // cluster's shards written one connection at a time; the statistics triggers of memories are
    // safe on Citus because everything they write is the same tenant's, on the same node.
    await sql`SET LOCAL citus.multi_shard_modify_mode = 'sequential'`.execute(trx);
    await sql`SET LOCAL citus.enable_unsafe_triggers = on`.execute(trx);
    const plan = distributionPlan({ done: await readDistributed(trx), foreignKeys: await readForeignKeys(trx) });
    for (const statement of plan) await sql.raw(statement).execute(trx);
    return plan;
  });
  await setOnEveryNode(db, NODE_SETTINGS);
  return plan;
}

/**
 * Settings the database needs on every node, not only on the coordinator the service connects to.
 * JIT: the service turns it off for its own connections (src/db/connect.ts), but the shard queries
 * run on connections Citus opens to the workers, which compiled every recall's statement (3.7 s
 * for a recall of 42 ms on one Postgres); those connections start with the database's defaults.
 */
export const NODE_SETTINGS: Readonly<Record<string, string>> = { jit: 'off' };

/**
 * `ALTER DATABASE … SET` for the service's database on the coordinator, which Citus (12 and newer)
 * sends on to every worker; a worker refuses it sent directly. Each worker's copy is then read back,
 * and a worker without it (a Citus that does not forward it, a worker added later) is named.
 */
async function setOnEveryNode(db: Db, settings: Readonly<Record<string, string>>): Promise<void> {
  const { rows } = await sql<{ name: string }>`SELECT current_database() AS name`.execute(db);
  const database = ident(rows[0]?.name ?? '');
  for (const [name, value] of Object.entries(settings)) {
    await sql.raw(`ALTER DATABASE ${database} SET ${ident(name)} = ${literal(value)}`).execute(db);
  }
  const missing = (await workerNodeSettings(db)).filter((s) => s.value !== settings[s.name]);
  if (missing.length > 0) {
    throw new Error(
      `the database's settings did not reach every worker: ${missing
        .map((s) => `${s.node} has ${s.name} = ${s.value || 'its default'}`)
        .join('; ')}; run ALTER DATABASE ${database} SET … on each of them as a superuser`,
    );
  }
}

/** What each worker holds for this database of NODE_SETTINGS (empty: the server's default). */
export async function workerNodeSettings(db: Db): Promise<{ node: string; name: string; value: string }[]> {
  const query = `SELECT coalesce(string_agg(c, ',' ORDER BY c), '') FROM pg_db_role_setting AS s, unnest(s.setconfig) AS c
    WHERE s.setrole = 0 AND s.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())`;
  const { rows } = await sql<{ node: string; result: string }>`
    SELECT nodename || ':' || nodeport AS node, result FROM run_command_on_workers(${query}) ORDER BY 1`.execute(db);
  const answers: { node: string; name: string; value: string }[] = [];
  for (const row of rows) {
    const held = new Map(
      row.result
        .split(',')
        .filter((c) => c.includes('='))
        .map((c) => [c.slice(0, c.indexOf('=')), c.slice(c.indexOf('=') + 1)] as const),
    );
    for (const name of Object.keys(NODE_SETTINGS)) answers.push({ node: row.node, name, value: held.get(name) ?? '' });
  }
  return answers;
}

/** True on a Citus database where some table is still local: `migrate --citus` has not run since a migration. */
export async function distributionPending(db: Db): Promise<boolean> {
  const done = await readDistributed(db);
  return [...REFERENCE_TABLES, ...DISTRIBUTED_TABLES].some((t) => !done.has(t));
}
