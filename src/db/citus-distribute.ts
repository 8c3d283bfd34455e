import { sql } from 'kysely';
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
  'webhook_endpoints',
  'webhook_deliveries',
] as const;

/**
 * Functions the workers need that Citus cannot find by itself. Citus sends a distributed table's
 * trigger functions along with its triggers, but not what a function's body calls: the statistics
 * triggers of memories (migration 0006) call this one on the shards.
 */
const CALLED_FUNCTIONS = ['memory_stats_unit(text, text, uuid, uuid)'] as const;

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
    ...pendingDistributed.map((t) =>
      t === group
        ? `SELECT create_distributed_table(${literal(t)}, 'tenant_id')`
        : `SELECT create_distributed_table(${literal(t)}, 'tenant_id', colocate_with => ${literal(group)})`,
    ),
    ...moved.map((fk) => `ALTER TABLE ${ident(fk.table)} ADD CONSTRAINT ${ident(fk.name)} ${fk.definition}`),
  ];
}

/** The foreign keys among the schema's tables, as the catalog holds them. */
export async function readForeignKeys(db: Db): Promise<ForeignKey[]> {
  const { rows } = await sql<ForeignKey>`
    SELECT c.conrelid::regclass::text AS table, c.conname AS name,
      pg_get_constraintdef(c.oid) AS definition, c.confrelid::regclass::text AS references
    FROM pg_constraint AS c
    WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace
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

export class NotCitusError extends Error {}

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
  return db.transaction().execute(async (trx) => {
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
}

/** True on a Citus database where some table is still local: `migrate --citus` has not run since a migration. */
export async function distributionPending(db: Db): Promise<boolean> {
  const done = await readDistributed(db);
  return [...REFERENCE_TABLES, ...DISTRIBUTED_TABLES].some((t) => !done.has(t));
}
