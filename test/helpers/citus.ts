import pg from 'pg';

/**
 * Whether TEST_DATABASE_URL is a Citus coordinator: the whole fast suite runs there too
 * (docs/scale-out.md#citus), and the few tests that need a database without Citus, or read plans
 * that are Citus' own there, skip themselves on it.
 */
export async function testDatabaseIsCitus(): Promise<boolean> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return false;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ citus: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS citus`,
    );
    return rows[0]?.citus === true;
  } finally {
    await client.end();
  }
}
