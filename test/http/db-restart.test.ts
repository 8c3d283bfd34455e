import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SETUP_TOKEN } from '../helpers/harness.js';
import { CLUSTER_BINARIES, clusterBinariesPresent, startOwnCluster, type OwnCluster } from '../helpers/own-cluster.js';
import { childEnv, exited, freePort, spawnCli } from '../helpers/cli.js';

/**
 * The database restarts, crashes or ends a session under a running `agent-memory serve`: the process
 * lives through it, answers 503 `unavailable` with Retry-After while the database is away, serves
 * again by itself once it is back, and every write it acknowledged is still there. On a cluster of
 * the test's own (the machine's shared one is never stopped), in the Postgres run: the embedded
 * PGlite lives inside the process, so there is no server to lose there.
 */
const DATABASE = 'agent_memory';
/** Concurrent writers of the write stream. */
const WRITERS = 4;
/** How long the service may take to serve again once the database is back ("within seconds"). */
const RECOVERY_DEADLINE_MS = 30_000;

type Json = Record<string, unknown>;
type Auth = { Authorization: string };
interface Answer {
  status: number;
  body: Json;
  retryAfter: string | null;
}

const onPostgres = process.env.TEST_DATABASE_URL !== undefined;

describe.skipIf(!onPostgres)('the database restarting under a serving process (Postgres)', () => {
  let cluster: OwnCluster | undefined;
  let child: ChildProcess;
  let base: string;
  let port: number;
  let stderr = '';

  const call = async (
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: unknown,
  ): Promise<Answer> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return {
      status: res.status,
      body: text ? (JSON.parse(text) as Json) : {},
      retryAfter: res.headers.get('retry-after'),
    };
  };

  /** A text no other resembles, so that every store creates its own memory. */
  const unique = (what: string): string => `${what} ${randomUUID()} ${randomUUID()}`;

  const store = (auth: Auth, content: string): Promise<Answer> =>
    call('POST', '/v1/memories', auth, { agent_id: 'agent', content });

  async function waitFor(condition: () => boolean | Promise<boolean>, what: string, deadlineMs = 30_000) {
    const deadline = Date.now() + deadlineMs;
    while (!(await condition())) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`serve exited (${child.exitCode ?? child.signalCode}) waiting for ${what}; stderr:\n${stderr}`);
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(100);
    }
  }

  /** The process still runs and answers: a dead one refuses the connection. */
  async function expectAlive(): Promise<void> {
    const health = await fetch(`${base}/healthz`).then(
      (res) => res.status,
      (error: unknown) => `no answer (${String(error)}); stderr:\n${stderr}`,
    );
    expect(health).toBe(200);
    expect(child.exitCode).toBeNull();
  }

  function expectUnavailable(answer: Answer, what: string): void {
    expect({ what, status: answer.status, code: answer.body.code }).toEqual({ what, status: 503, code: 'unavailable' });
    expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
  }

  async function newOrg(): Promise<Auth> {
    const setup = await call('POST', '/v1/setup', { 'X-Setup-Token': SETUP_TOKEN }, { org_name: unique('org') });
    if (setup.status !== 201) throw new Error(`setup: ${setup.status} ${JSON.stringify(setup.body)}`);
    return { Authorization: `Bearer ${setup.body.api_key as string}` };
  }

  /** Stores until told to stop, from several writers at once; what each store answered. */
  function writeStream(auth: Auth) {
    let stopping = false;
    const acknowledged: { id: string; content: string }[] = [];
    const refused: (Answer & { content: string })[] = [];
    const failed: string[] = [];
    const writer = async () => {
      while (!stopping) {
        const content = unique('streamed fact');
        try {
          const answer = await store(auth, content);
          if (answer.status === 201 || answer.status === 200) {
            acknowledged.push({ id: answer.body.id as string, content });
          } else {
            refused.push({ ...answer, content });
            // The service asked to come back later: a client that listens does not hammer it.
            await sleep(100);
          }
        } catch (error) {
          failed.push(String(error));
          await sleep(100);
        }
      }
    };
    const writers = Promise.all([...Array(WRITERS).keys()].map(writer));
    return {
      acknowledged,
      refused,
      failed,
      stop: async () => {
        stopping = true;
        await writers;
      },
    };
  }

  /** Each acknowledged write reads back, as written. */
  async function expectAllThere(auth: Auth, written: { id: string; content: string }[]): Promise<void> {
    const missing: string[] = [];
    for (const { id, content } of written) {
      const read = await call('GET', `/v1/memories/${id}`, auth);
      if (read.status !== 200 || read.body.content !== content) missing.push(`${id}: ${read.status}`);
    }
    expect(missing).toEqual([]);
  }

  beforeAll(async () => {
    if (!clusterBinariesPresent()) {
      throw new Error(
        `this test starts a PostgreSQL 15 cluster of its own and needs ${CLUSTER_BINARIES.join(' and ')} ` +
          '(Debian: postgresql-15, with postgresql-15-pgvector)',
      );
    }
    cluster = await startOwnCluster();
    await cluster.query(`CREATE DATABASE ${DATABASE}`);
    await cluster.query('CREATE EXTENSION IF NOT EXISTS vector', [], DATABASE);
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawnCli(
      ['serve'],
      childEnv({
        DATABASE_URL: cluster.url(DATABASE),
        PORT: String(port),
        HOST: '127.0.0.1',
        SETUP_TOKEN,
        RATE_LIMIT_PER_MINUTE: '0',
        LOG_LEVEL: 'warn',
      }),
    );
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    await waitFor(
      async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.ok === true,
      'serve to be ready',
      120_000,
    );
  }, 240_000);

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited(child);
    }
    await cluster?.destroy();
  });

  for (const [mode, aStop] of [
    ['fast', 'a fast stop'],
    ['immediate', 'an immediate stop (a crash)'],
  ] as const) {
    it(`lives through ${aStop} under a stream of writes, answers 503 meanwhile, recovers, loses nothing acknowledged`, async () => {
      const auth = await newOrg();
      const stream = writeStream(auth);
      try {
        await waitFor(() => stream.acknowledged.length >= 20, 'writes before the stop');
        await cluster!.stop(mode);

        // The database is gone: the process lives, and tells every caller to come back later.
        await expectAlive();
        const [acked] = stream.acknowledged;
        expectUnavailable(await store(auth, unique('while away')), 'a store');
        expectUnavailable(await call('GET', `/v1/memories/${acked!.id}`, auth), 'a read');
        expectUnavailable(await call('GET', '/v1/memories/recall?agent_id=agent&query=fact', auth), 'a recall');
        expect((await call('GET', '/readyz', {})).status).toBe(503);
        const refusedWhileAway = stream.refused.length;
        await waitFor(() => stream.refused.length > refusedWhileAway, 'the stream to be refused while away');

        await cluster!.start();
        const acknowledgedBefore = stream.acknowledged.length;
        // Serving again by itself: no restart of the process, no request of an operator.
        await waitFor(
          () => stream.acknowledged.length > acknowledgedBefore,
          'writes after the restart',
          RECOVERY_DEADLINE_MS,
        );
        expect((await call('GET', '/readyz', {})).status).toBe(200);
      } finally {
        await stream.stop();
      }

      expect(stream.failed).toEqual([]);
      for (const answer of stream.refused) expectUnavailable(answer, `a store during the ${mode} stop`);
      await expectAllThere(auth, stream.acknowledged);
      await expectAlive();
    }, 180_000);
  }

  it('answers 503 for a store whose session is terminated inside its transaction, then serves on', async () => {
    const auth = await newOrg();
    // The test's session holds the memories table, so that a store waits for it inside its transaction.
    const holder = new pg.Client({ connectionString: cluster!.url(DATABASE) });
    holder.on('error', () => undefined);
    await holder.connect();
    try {
      const holderPid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE memories IN EXCLUSIVE MODE');
      const blocked = store(auth, unique('terminated'));
      let pid: number | undefined;
      await waitFor(async () => {
        const rows = await cluster!.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND state = 'active' AND pid <> $1`,
          [holderPid],
          DATABASE,
        );
        pid = rows[0]?.pid;
        return pid !== undefined;
      }, 'a store waiting for the table');
      await cluster!.query('SELECT pg_terminate_backend($1)', [pid], DATABASE);
      expectUnavailable(await blocked, 'the store whose session was terminated');
      await holder.query('ROLLBACK');
    } finally {
      await holder.end();
    }
    await expectAlive();
    const content = unique('after the termination');
    const after = await store(auth, content);
    expect(after.status).toBe(201);
    await expectAllThere(auth, [{ id: after.body.id as string, content }]);
  }, 120_000);

  // Exports no longer wait on their client inside a transaction (they are spooled), so no request
  // leaves a session idle in a transaction for idle_in_transaction_session_timeout to end; the
  // session ended under a transaction is the pg_terminate_backend case above. What the database may
  // still end at any time is a pooled session waiting idle: idle_session_timeout does that.
  it('lives through idle_session_timeout ending its pooled sessions, then serves and exports whole', async () => {
    const auth = await newOrg();
    const written: { id: string; content: string }[] = [];
    for (let i = 0; i < 5; i++) {
      const content = unique('pooled');
      const answer = await store(auth, content);
      expect(answer.status).toBe(201);
      written.push({ id: answer.body.id as string, content });
    }
    await cluster!.query("ALTER SYSTEM SET idle_session_timeout = '1s'");
    await cluster!.query('SELECT pg_reload_conf()');
    const logBefore = cluster!.serverLog().length;
    try {
      // A session reads the new setting between two statements: a few more stores, then the pool waits.
      for (let i = 0; i < 3; i++) {
        const content = unique('pooled');
        const answer = await store(auth, content);
        expect(answer.status).toBe(201);
        written.push({ id: answer.body.id as string, content });
      }
      await waitFor(
        () => cluster!.serverLog().slice(logBefore).includes('idle-session timeout'),
        'the database to end an idle pooled session',
      );
      // The service reports the session it lost (or, unguarded, dies of it).
      await waitFor(() => stderr.includes('57P05'), 'the service to read the end of its session');
      await expectAlive();
    } finally {
      await cluster!.query('ALTER SYSTEM RESET idle_session_timeout');
      await cluster!.query('SELECT pg_reload_conf()');
    }

    const after = await store(auth, unique('after the timeout'));
    expect(after.status).toBe(201);
    const exported = await fetch(`${base}/v1/export`, { headers: auth });
    expect(exported.status).toBe(200);
    const records = (await exported.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Json);
    expect(records.at(-1)?.type).toBe('end');
    const ids = new Set(records.filter((r) => r.type === 'memory').map((r) => r.id));
    expect([...written.map((w) => w.id), after.body.id].filter((id) => !ids.has(id))).toEqual([]);
    await expectAlive();
  }, 180_000);
});
