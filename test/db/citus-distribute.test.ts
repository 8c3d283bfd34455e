import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DISTRIBUTED_TABLES,
  distributeForCitus,
  distributionPlan,
  NotCitusError,
  readForeignKeys,
  REFERENCE_TABLES,
  unplacedTables,
} from '../../src/db/citus-distribute.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { startCore, type Running } from '../../src/start-core.js';
import { engine, testConfig } from '../helpers/harness.js';
import { isolatedDatabase, type IsolatedDb } from '../helpers/isolated-db.js';

const isCitusCall = (s: string) => /^SELECT (create_(distributed|reference)_|truncate_local_data_)/.test(s);
const isPlacement = (s: string) => /^SELECT create_(distributed|reference)_/.test(s);

/**
 * `migrate --citus` without a cluster: the plan's order, and its foreign-key statements run for real
 * on this engine (everything but the Citus function calls), on a database of its own since they
 * alter every table. test/citus runs the whole plan on a cluster.
 */
describe(`the Citus distribution plan, on ${engine}`, () => {
  let iso: IsolatedDb;
  let running: Running;

  beforeAll(async () => {
    iso = await isolatedDatabase();
    running = await startCore(testConfig(iso.env), {
      embedder: createHashEmbedder(64),
      log: pino({ level: 'silent' }),
    });
  });

  afterAll(async () => {
    await running.close();
    await iso.drop();
  });

  it('places every table of the schema once: by tenant, or on every node', () => {
    expect(unplacedTables()).toEqual([]);
    const both = REFERENCE_TABLES.filter((t) => (DISTRIBUTED_TABLES as readonly string[]).includes(t));
    expect(both).toEqual([]);
  });

  it('drops the foreign keys, distributes reference tables first and the rest colocated, then adds the keys back', async () => {
    const foreignKeys = await readForeignKeys(running.core.db);
    expect(foreignKeys.length).toBeGreaterThanOrEqual(10);
    // Every foreign key leads with tenant_id or points at a reference table: what Citus can enforce.
    for (const fk of foreignKeys) {
      expect(fk.definition.startsWith('FOREIGN KEY (tenant_id') || fk.references === 'tenants').toBe(true);
    }
    const plan = distributionPlan({ done: new Set(), foreignKeys });
    const firstCitusCall = plan.findIndex(isCitusCall);
    const lastCitusCall = plan.length - 1 - [...plan].reverse().findIndex(isPlacement);
    const firstTruncate = plan.findIndex((s) => s.includes('truncate_local_data_after_distributing_table'));
    expect(plan.slice(0, foreignKeys.length).every((s) => s.includes('DROP CONSTRAINT'))).toBe(true);
    expect(plan.slice(lastCitusCall + 1, firstTruncate)).toHaveLength(foreignKeys.length);
    expect(plan.slice(lastCitusCall + 1, firstTruncate).every((s) => s.includes('ADD CONSTRAINT'))).toBe(true);
    // The coordinator's copy of every table's rows goes once the shards hold them.
    expect(plan.slice(firstTruncate)).toEqual(
      [...REFERENCE_TABLES, ...DISTRIBUTED_TABLES].map(
        (t) => `SELECT truncate_local_data_after_distributing_table('${t}')`,
      ),
    );
    // The statistics triggers are off while memories' rows are copied into its shards.
    const distributeMemories = plan.indexOf(
      "SELECT create_distributed_table('memories', 'tenant_id', colocate_with => 'api_keys')",
    );
    expect(plan.slice(distributeMemories - 1, distributeMemories + 2)).toEqual([
      'ALTER TABLE "memories" DISABLE TRIGGER USER',
      plan[distributeMemories],
      'ALTER TABLE "memories" ENABLE TRIGGER USER',
    ]);
    const calls = plan
      .slice(firstCitusCall, lastCitusCall + 1)
      .filter((s) => /^SELECT create_(distributed|reference)_table/.test(s));
    // What the triggers call reaches the workers before the table whose triggers call it.
    expect(plan.findIndex((s) => s.includes('create_distributed_function'))).toBe(firstCitusCall);
    expect(calls.slice(0, REFERENCE_TABLES.length)).toEqual(
      REFERENCE_TABLES.map((t) => `SELECT create_reference_table('${t}')`),
    );
    expect(calls[REFERENCE_TABLES.length]).toBe("SELECT create_distributed_table('api_keys', 'tenant_id')");
    expect(calls.slice(REFERENCE_TABLES.length + 1)).toEqual(
      DISTRIBUTED_TABLES.slice(1).map(
        (t) => `SELECT create_distributed_table('${t}', 'tenant_id', colocate_with => 'api_keys')`,
      ),
    );
  });

  it('leaves what is distributed alone, and has nothing to do once everything is', async () => {
    const foreignKeys = await readForeignKeys(running.core.db);
    const all = new Set<string>([...REFERENCE_TABLES, ...DISTRIBUTED_TABLES]);
    expect(distributionPlan({ done: all, foreignKeys })).toEqual([]);
    // A table added later: only the keys that touch it move.
    const later = new Set(all);
    later.delete('memory_mentions');
    const plan = distributionPlan({ done: later, foreignKeys });
    const touching = foreignKeys.filter((fk) => fk.table === 'memory_mentions' || fk.references === 'memory_mentions');
    expect(plan.filter((s) => s.includes('DROP CONSTRAINT'))).toHaveLength(touching.length);
    expect(plan.filter((s) => s.startsWith('SELECT create_distributed_table'))).toEqual([
      "SELECT create_distributed_table('memory_mentions', 'tenant_id', colocate_with => 'api_keys')",
    ]);
  });

  it('gives back the same foreign keys it dropped, on a real database', async () => {
    const { db } = running.core;
    const before = await readForeignKeys(db);
    const plan = distributionPlan({ done: new Set(), foreignKeys: before }).filter((s) => !isCitusCall(s));
    await db.transaction().execute(async (trx) => {
      for (const statement of plan) await sql.raw(statement).execute(trx);
    });
    expect(await readForeignKeys(db)).toEqual(before);
  });

  it('refuses to distribute a database without Citus, saying what to do', async () => {
    await expect(distributeForCitus(running.core.db)).rejects.toThrow(NotCitusError);
    await expect(distributeForCitus(running.core.db)).rejects.toThrow(/CREATE EXTENSION citus/);
  });
});
