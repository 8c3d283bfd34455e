import { sql, type KyselyPlugin, type PluginTransformQueryArgs, type PluginTransformResultArgs } from 'kysely';
import type { Db } from './connect.js';

/**
 * What the code does differently on a Citus cluster (docs/scale-out.md#citus). The same schema and
 * statements serve plain Postgres, PGlite and Citus; only settings local to a transaction need more
 * on Citus, because the coordinator keeps them to itself unless told to forward them to the workers
 * that run the shard queries.
 */

/** True when the database is a Citus coordinator (or any node with the extension installed). */
export async function detectCitus(db: Db): Promise<boolean> {
  const { rows } = await sql<{ citus: boolean }>`
    SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS citus`.execute(db);
  return rows[0]?.citus === true;
}

/**
 * Marks a database handle as talking to Citus. A plugin, because a plugin is the one thing Kysely
 * hands on to every transaction begun from the handle, so code that receives a transaction can ask
 * `onCitus(trx)` without the flag being threaded through every signature. It changes no query.
 */
class CitusMarker implements KyselyPlugin {
  transformQuery(args: PluginTransformQueryArgs): PluginTransformQueryArgs['node'] {
    return args.node;
  }

  transformResult(args: PluginTransformResultArgs): Promise<PluginTransformResultArgs['result']> {
    return Promise.resolve(args.result);
  }
}

const marker = new CitusMarker();

/** The same database, marked as Citus; it shares the handle's connections. */
export function withCitus(db: Db): Db {
  return onCitus(db) ? db : db.withPlugin(marker);
}

export function onCitus(db: Db): boolean {
  return db.getExecutor().plugins.includes(marker);
}

/** Names of settings we set; anything else is refused before it is spliced into SQL. */
const SETTING_NAME = /^[a-z_]+(\.[a-z_]+)?$/;

/**
 * Sets each setting for the rest of the caller's transaction. On plain Postgres and PGlite, one
 * statement of set_config(…, true) calls, which is SET LOCAL in one round trip. On Citus, SET LOCAL
 * statements after `citus.propagate_set_commands = 'local'`: Citus forwards SET LOCAL statements
 * to the workers' transactions then, and never a set_config call; without it, a shard query runs
 * with the worker's defaults (an HNSW scan with ef_search 40 returns at most 40 rows, whatever the
 * LIMIT).
 */
export async function setLocal(trx: Db, settings: Readonly<Record<string, string>>): Promise<void> {
  const entries = Object.entries(settings);
  for (const [name] of entries) if (!SETTING_NAME.test(name)) throw new Error(`not a setting name: ${name}`);
  if (entries.length === 0) return;
  if (!onCitus(trx)) {
    const calls = entries.map(([name, value]) => sql`set_config(${sql.lit(name)}, ${sql.lit(value)}, true)`);
    await sql`SELECT ${sql.join(calls)}`.execute(trx);
    return;
  }
  await sql`SET LOCAL citus.propagate_set_commands = 'local'`.execute(trx);
  for (const [name, value] of entries) await sql`SET LOCAL ${sql.raw(name)} = ${sql.lit(value)}`.execute(trx);
}
