import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { connectionProblem, openPostgres } from '../../src/db/connect.js';
import { knownFailure } from '../../src/cli/failure.js';
import { freePort } from '../helpers/cli.js';

/** What `agent-memory serve|mcp|migrate` print for a failure: one line, for the ones a user can fix. */
async function lineFor(url: string): Promise<string | undefined> {
  const failure = await openPostgres(url, 1).then(
    async (handle) => {
      await handle.close();
      throw new Error('opened');
    },
    (error: unknown) => error,
  );
  return knownFailure(failure);
}

describe('a DATABASE_URL that does not lead to a database', () => {
  it('says nothing answers at its host and port, in one line without the password', async () => {
    const port = await freePort();
    const line = await lineFor(`postgres://someone:s3cret-pw@127.0.0.1:${port}/memories`);
    expect(line).toBe(`nothing accepts connections at 127.0.0.1:${port} (DATABASE_URL); is PostgreSQL running there?`);
  });

  it.runIf(process.env.TEST_DATABASE_URL)('names a database that does not exist, and how to create it', async () => {
    const url = new URL(process.env.TEST_DATABASE_URL ?? '');
    const missing = `am_missing_${randomUUID().slice(0, 8)}`;
    url.pathname = `/${missing}`;
    const line = await lineFor(url.href);
    expect(line).toMatch(
      new RegExp(`^the database "${missing}" of DATABASE_URL does not exist on PostgreSQL at ${url.hostname}:`),
    );
    expect(line).toContain(`createdb -h ${url.hostname}`);
    expect(line).not.toContain('\n');
  });

  it('translates what the driver reports, and leaves other failures alone', () => {
    const url = 'postgres://ann:hunter2@db.internal:6543/mem';
    const cases: [unknown, RegExp][] = [
      [
        { code: '3D000' },
        /^the database "mem" of DATABASE_URL does not exist on PostgreSQL at db\.internal:6543; create it \(createdb -h db\.internal -p 6543 -U ann mem\)/,
      ],
      [
        Object.assign(new Error('password authentication failed for user "ann"'), { code: '28P01' }),
        /^PostgreSQL at db\.internal:6543 refused user "ann" for database "mem": password authentication failed/,
      ],
      [{ code: 'ENOTFOUND' }, /^the host "db\.internal" of DATABASE_URL cannot be resolved$/],
      [
        new AggregateError([{ code: 'ECONNREFUSED' }, { code: 'ECONNREFUSED' }]),
        /^nothing accepts connections at db\.internal:6543/,
      ],
    ];
    for (const [error, message] of cases) {
      const problem = connectionProblem(error, url);
      expect(problem?.message).toMatch(message);
      expect(problem?.message).not.toContain('hunter2');
    }
    expect(connectionProblem(new Error('syntax error'), url)).toBeUndefined();
    expect(connectionProblem({ code: '42P01' }, url)).toBeUndefined();
  });
});
