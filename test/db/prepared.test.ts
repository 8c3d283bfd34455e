import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type DbHandle } from '../../src/db/connect.js';
import { executePrepared, prepared, statementName } from '../../src/db/prepared.js';

const url = process.env.TEST_DATABASE_URL;

describe.skipIf(!url)('statements marked as prepared, on Postgres', () => {
  let handle: DbHandle;
  beforeAll(async () => {
    // One connection, so that the statements this test runs and the one it asks about share it.
    handle = await openPostgres(url as string, 1);
  });
  afterAll(async () => {
    await handle.close();
  });

  it('are prepared once per connection under the hash of their text, and unmarked ones are not', async () => {
    const marked = sql<{ n: number }>`SELECT ${41}::int + 1 AS n`;
    const compiled = marked.compile(handle.db);
    for (let i = 0; i < 3; i++) expect((await executePrepared(handle.db, compiled)).rows).toEqual([{ n: 42 }]);
    await sql`SELECT ${1}::int AS unmarked`.execute(handle.db);
    const prepared = await sql<{ name: string; statement: string }>`
      SELECT name, statement FROM pg_prepared_statements`.execute(handle.db);
    expect(prepared.rows).toHaveLength(1);
    expect(prepared.rows[0]?.name).toBe(statementName(compiled.sql));
  });

  it('are prepared only when the call site asks, whatever their text says', async () => {
    // A comment is no instruction: only prepared() at the call site names a statement.
    await sql`/* prepared */ SELECT ${2}::int AS commented`.execute(handle.db);
    const commented = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE '%AS commented%'`.execute(handle.db);
    expect(commented.rows).toEqual([{ n: 0 }]);
    const query = sql<{ n: number }>`SELECT ${3}::int AS n`.compile(handle.db);
    expect((await handle.db.executeQuery(prepared(query))).rows).toEqual([{ n: 3 }]);
    const named = await sql<{ name: string }>`
      SELECT name FROM pg_prepared_statements WHERE statement = ${query.sql}`.execute(handle.db);
    expect(named.rows).toEqual([{ name: statementName(query.sql) }]);
  });

  it('run marked statements with generic plans and every other statement as Postgres chooses', async () => {
    const mode = sql<{ mode: string }>`SELECT current_setting('plan_cache_mode') AS mode, ${1}::int AS one`;
    const markedMode = async () => (await executePrepared(handle.db, mode.compile(handle.db))).rows[0]?.mode;
    const plainMode = async () => (await mode.execute(handle.db)).rows[0]?.mode;
    expect(await plainMode()).toBe('auto');
    expect(await markedMode()).toBe('force_generic_plan');
    expect(await markedMode()).toBe('force_generic_plan');
    expect(await plainMode()).toBe('auto');
    // Left to choose, Postgres planned a marked statement anew for its values on every call.
    const lookup = sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM pg_class WHERE relname = ANY(${['pg_class', 'pg_proc']}::text[])`;
    for (let i = 0; i < 8; i++) {
      expect((await executePrepared(handle.db, lookup.compile(handle.db))).rows).toEqual([{ n: 2 }]);
    }
    const plans = await sql<{ generic: string; custom: string }>`
      SELECT generic_plans::text AS generic, custom_plans::text AS custom FROM pg_prepared_statements
      WHERE statement LIKE '%relname = ANY%'`.execute(handle.db);
    expect(plans.rows).toEqual([{ generic: '8', custom: '0' }]);
    // Inside a transaction a marked statement runs as any other, leaving the transaction's plans alone.
    const inTransaction = await handle.db
      .transaction()
      .execute(async (trx) => (await executePrepared(trx, mode.compile(trx))).rows[0]?.mode);
    expect(inTransaction).toBe('auto');
  });

  it('leave the plan to Postgres where generic plans are not forced (a Citus coordinator)', async () => {
    const other = await openPostgres(url as string, 1);
    try {
      const mode = sql<{ mode: string }>`SELECT current_setting('plan_cache_mode') AS mode, ${2}::int AS two`;
      const markedMode = async () => (await executePrepared(other.db, mode.compile(other.db))).rows[0]?.mode;
      expect(await markedMode()).toBe('force_generic_plan');
      // What start-up does on finding Citus; connections already in generic mode switch back.
      (other.plans as { forceGeneric: boolean }).forceGeneric = false;
      expect(await markedMode()).toBe('auto');
      expect(await markedMode()).toBe('auto');
      // Still prepared once, under the same name.
      const named = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = ${statementName(mode.compile(other.db).sql)}`.execute(
        other.db,
      );
      expect(named.rows).toEqual([{ n: 1 }]);
    } finally {
      await other.close();
    }
  });
});
