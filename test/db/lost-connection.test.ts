import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPostgres, openReadReplica, type DbHandle } from '../../src/db/connect.js';
import { outageError } from '../../src/errors.js';
import { capturedLog } from '../helpers/captured-log.js';

const url = process.env.TEST_DATABASE_URL;

/** One statement on a connection of the test's own. */
async function admin<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** Ends a session and waits until it has ended. */
async function terminate(pid: number | undefined): Promise<void> {
  // int: Citus adds pg_terminate_backend(global_pid bigint, …), which an untyped pid would call.
  const [ended] = await admin<{ ended: boolean }>('SELECT pg_terminate_backend($1::int, 30000) AS ended', [pid]);
  if (!ended?.ended) throw new Error(`backend ${pid} did not end`);
}

/** The backend running the statement that carries this marker, once it runs. */
async function backendRunning(marker: string): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const rows = await admin<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1 AND pid <> pg_backend_pid()`,
      [`%${marker}%`],
    );
    if (rows[0]) return rows[0].pid;
    if (Date.now() > deadline) throw new Error(`no backend runs ${marker}`);
    await sleep(50);
  }
}

/**
 * A pooled connection whose session the server ends (pg_terminate_backend here; a shutdown or a
 * timeout the same way): the statement on it fails as an outage, the process goes on, and the
 * connection is never handed to another statement. Postgres only: PGlite has no server session.
 */
describe.skipIf(!url)('a pooled connection lost on Postgres', () => {
  const openers: [string, (log: ReturnType<typeof capturedLog>['log']) => Promise<DbHandle>][] = [
    ['the primary', (log) => openPostgres(url as string, 1, log)],
    ['a read replica', (log) => Promise.resolve(openReadReplica(url as string, 1, log))],
  ];

  for (const [which, open] of openers) {
    it(`is discarded at once, not given to the statement waiting for it (${which})`, async () => {
      const { log } = capturedLog();
      // One connection, so that the second statement waits for the first one's.
      const handle = await open(log);
      try {
        const marker = `lost_${randomUUID().replaceAll('-', '')}`;
        const first = sql`SELECT pg_sleep(60) AS ${sql.ref(marker)}`.execute(handle.db);
        const firstFailure = first.then(
          () => undefined,
          (error: unknown) => error,
        );
        const second = sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(handle.db);
        const pid = await backendRunning(marker);
        await terminate(pid);

        expect(outageError(await firstFailure)?.code).toBe('unavailable');
        // The waiting statement runs on a new connection, not on the one the server ended.
        const answered = (await second).rows[0]?.pid;
        expect(answered).toBeDefined();
        expect(answered).not.toBe(pid);
      } finally {
        await handle.close();
      }
    });
  }

  it('survives losing a connection held between statements of a transaction', async () => {
    const { log, lines } = capturedLog();
    const handle = await openPostgres(url as string, 2, log);
    try {
      const failure = await handle.db
        .transaction()
        .execute(async (trx) => {
          const pid = (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx)).rows[0]?.pid;
          // Idle in its transaction, as while a client reads an export slowly, when the server ends it.
          await terminate(pid);
          await sql`SELECT 1`.execute(trx);
        })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(outageError(failure)?.code).toBe('unavailable');
      // Lost with no statement of its own under way: only the log tells.
      expect(lines.join('')).toMatch(/a database connection was lost/);
      expect((await sql<{ one: number }>`SELECT 1 AS one`.execute(handle.db)).rows).toEqual([{ one: 1 }]);
    } finally {
      await handle.close();
    }
  });
});
