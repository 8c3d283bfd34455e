import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type DbHandle } from '../../src/db/connect.js';
import { executePrepared, statementName } from '../../src/db/prepared.js';

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
    expect(prepared.rows[0]?.name).toBe(statementName(`/* prepared */ ${compiled.sql}`));
  });
});
