import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SWEEP_LOCK_KEY } from '../../src/domain/lifecycle/sweeper.js';
import { SETUP_TOKEN } from '../helpers/harness.js';
import { isolatedDatabase, type IsolatedDb } from '../helpers/isolated-db.js';
import { childEnv, exited, spawnCli, tempDir } from '../helpers/cli.js';

/**
 * Stateless replicas (docs/scale-out.md): three `agent-memory serve` processes on one Postgres
 * database, started together (so their migrations race for the lock), and a mixed workload spread
 * over them: stores, the same fact stored on all three at once, recalls, session starts, stores
 * and ends, a purge, and the sweeper of all three expiring the ended sessions. Nothing is lost,
 * nothing is duplicated, no tenant sees another's memories.
 *
 * Postgres only: the embedded database is one process's by design. On it, the second test here
 * shows the folder lock refusing a second `serve` on the same folder instead.
 */
const PROCESSES = 3;
// The project's ports for this test: the first three of 7510..7519.
const FIRST_PORT = 7510;
const START_TIMEOUT_MS = 120_000;

type Auth = { Authorization: string };
type Json = Record<string, unknown>;

describe.skipIf(!process.env.TEST_DATABASE_URL)('three serve processes on one database', () => {
  let database: IsolatedDb;
  const children: ChildProcess[] = [];
  const stderr: string[] = [];
  const bases: string[] = [];
  /** The process a request goes to: each call takes the next, so every step is spread over all three. */
  let turn = 0;
  const nextBase = (): string => bases[turn++ % PROCESSES] as string;

  async function waitReady(i: number): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    const child = children[i] as ChildProcess;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`serve ${i} exited (${child.exitCode}); stderr:\n${stderr[i]}`);
      try {
        if ((await fetch(`${bases[i]}/readyz`)).ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`serve ${i} did not become ready; stderr:\n${stderr[i]}`);
  }

  async function call(
    method: string,
    path: string,
    auth: Auth | Record<string, string>,
    body?: unknown,
    base = nextBase(),
  ): Promise<{ status: number; body: Json }> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...auth },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
  }

  async function expectCall(
    status: number,
    method: string,
    path: string,
    auth: Auth | Record<string, string>,
    body?: unknown,
    base?: string,
  ): Promise<Json> {
    const res = await call(method, path, auth, body, base);
    if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async function newOrg(): Promise<{ tenantId: string; auth: Auth }> {
    const body = await expectCall(
      201,
      'POST',
      '/v1/setup',
      { 'X-Setup-Token': SETUP_TOKEN },
      {
        org_name: `org-${randomUUID()}`,
      },
    );
    return { tenantId: body.tenant_id as string, auth: { Authorization: `Bearer ${body.api_key as string}` } };
  }

  const recall = async (auth: Auth, query: Record<string, string>, base?: string): Promise<Json[]> =>
    (
      await expectCall(
        200,
        'GET',
        `/v1/memories/recall?${new URLSearchParams(query).toString()}`,
        auth,
        undefined,
        base,
      )
    ).results as Json[];

  /** A text no other in the test resembles, so that no store reinforces another's memory. */
  const unique = (what: string): string => `${what} ${randomUUID()} ${randomUUID()}`;

  /** The sweeps a process skipped because another held the lock, from its /metrics. */
  async function skippedSweeps(base: string): Promise<number> {
    const text = await (await fetch(`${base}/metrics`)).text();
    const match = /^agent_memory_sweeps_total\{result="skipped"\} (\d+)$/m.exec(text);
    return Number(match?.[1] ?? 0);
  }

  async function waitFor(condition: () => Promise<boolean>, what: string): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  beforeAll(async () => {
    database = await isolatedDatabase();
    for (let i = 0; i < PROCESSES; i++) {
      const port = FIRST_PORT + i;
      bases.push(`http://127.0.0.1:${port}`);
      stderr.push('');
      const child = spawnCli(
        ['serve'],
        childEnv({
          ...database.env,
          PORT: String(port),
          HOST: '127.0.0.1',
          SETUP_TOKEN,
          RATE_LIMIT_PER_MINUTE: '0',
          // Ended sessions expire 1.8 s after their end, and every process sweeps each second.
          SESSION_TTL_HOURS: '0.0005',
          SWEEP_INTERVAL_SECONDS: '1',
          LOG_LEVEL: 'warn',
        }),
      );
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr[i] += chunk.toString();
      });
      children.push(child);
    }
    await Promise.all(children.map((_, i) => waitReady(i)));
  }, START_TIMEOUT_MS + 10_000);

  afterAll(async () => {
    for (const child of children) {
      child.kill('SIGTERM');
      await exited(child);
    }
    await database?.drop();
  });

  it('serves a mixed workload as one service: nothing lost, nothing duplicated, tenants apart', async () => {
    const a = await newOrg();
    const b = await newOrg();

    // Private memories of both tenants, stored at once, spread over the processes.
    const privateTexts = {
      a: [...Array(24).keys()].map(() => unique('note')),
      b: [...Array(6).keys()].map(() => unique('memo')),
    };
    const stored = await Promise.all([
      ...privateTexts.a.map((content) =>
        expectCall(201, 'POST', '/v1/memories', a.auth, { agent_id: 'agent', content }),
      ),
      ...privateTexts.b.map((content) =>
        expectCall(201, 'POST', '/v1/memories', b.auth, { agent_id: 'agent', content }),
      ),
    ]);
    const idsA = stored.slice(0, privateTexts.a.length).map((m) => m.id as string);

    // One fact stored twice on each process at once: created once, reinforced five times.
    const same = unique('The customer pays by invoice');
    const outcomes = await Promise.all(
      [...Array(2 * PROCESSES).keys()].map(async () => {
        const res = await call('POST', '/v1/memories', a.auth, {
          agent_id: 'agent',
          anchor_external_id: 'customer-1',
          content: same,
        });
        if (res.status !== 201 && res.status !== 200)
          throw new Error(`store: ${res.status} ${JSON.stringify(res.body)}`);
        return res.body.outcome as string;
      }),
    );
    expect(outcomes.filter((o) => o === 'created')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'reinforced' || o === 'promoted')).toHaveLength(2 * PROCESSES - 1);

    // The sweep's lock, held here: no process may sweep until it is released, whichever sees the
    // sessions expire first (the leader election all three go through).
    const client = new pg.Client({ connectionString: database.env.DATABASE_URL });
    await client.connect();
    await client.query(`SELECT pg_advisory_lock(${SWEEP_LOCK_KEY})`);

    // Sessions: each started on one process, stored into on the others, ended on another.
    const sessionIds: string[] = [];
    const sessionMemoryIds: string[] = [];
    await Promise.all(
      [...Array(PROCESSES).keys()].map(async () => {
        const session = await expectCall(201, 'POST', '/v1/sessions', a.auth, {
          agent_id: 'agent',
          anchor_external_id: 'customer-2',
        });
        const sessionId = session.id as string;
        sessionIds.push(sessionId);
        for (let i = 0; i < 4; i++) {
          const m = await expectCall(201, 'POST', '/v1/memories', a.auth, {
            agent_id: 'agent',
            session_id: sessionId,
            content: unique('this call is about'),
          });
          sessionMemoryIds.push(m.id as string);
        }
        await expectCall(200, 'POST', `/v1/sessions/${sessionId}/end`, a.auth, {});
      }),
    );

    // A subject stored on every process, then purged on one.
    const doomedIds = await Promise.all(
      [...Array(6).keys()].map(
        async () =>
          (
            await expectCall(201, 'POST', '/v1/memories', a.auth, {
              agent_id: 'agent',
              anchor_external_id: 'customer-3',
              content: unique('to be forgotten'),
            })
          ).id as string,
      ),
    );
    const doomed = await expectCall(200, 'GET', `/v1/memories/${doomedIds[0]}`, a.auth);
    const purge = await expectCall(200, 'DELETE', `/v1/anchors/${doomed.anchor_id as string}?purge=true`, a.auth);
    expect(purge.deleted).toEqual({ memories: 6, sessions: 0 });

    // Every private memory is found by recall on every process, and never by the other tenant.
    await Promise.all(
      privateTexts.a.map(async (content, i) => {
        for (const base of bases) {
          const results = await recall(a.auth, { agent_id: 'agent', query: content, limit: '1' }, base);
          expect(results.map((r) => r.id)).toEqual([idsA[i]]);
        }
        // Recall ranks everything in scope; the other tenant's scope holds only its own.
        const seenByB = await recall(b.auth, { agent_id: 'agent', query: content, limit: '100' });
        expect(seenByB.map((r) => r.content).filter((c) => !privateTexts.b.includes(c as string))).toEqual([]);
        expect((await call('GET', `/v1/memories/${idsA[i] as string}`, b.auth)).status).toBe(404);
      }),
    );
    for (const id of doomedIds) expect((await call('GET', `/v1/memories/${id}`, a.auth)).status).toBe(404);

    try {
      const left = async (): Promise<number> =>
        (
          await client.query<{ n: number }>('SELECT count(*)::int AS n FROM memories WHERE id = ANY($1)', [
            sessionMemoryIds,
          ])
        ).rows[0]?.n ?? -1;
      // Expired for a while now (1.8 s after their end), yet kept: every process found them due
      // and skipped the sweep it could not lead.
      await waitFor(async () => (await Promise.all(bases.map(skippedSweeps))).every((n) => n > 0), 'skipped sweeps');
      expect(await left()).toBe(sessionMemoryIds.length);
      await client.query(`SELECT pg_advisory_unlock(${SWEEP_LOCK_KEY})`);

      // Released: the sweepers of all three expire the ended sessions' memories, each exactly once.
      await waitFor(async () => (await left()) === 0, 'the sweep of the expired sessions');
      const expired = await client.query<{ memory_id: string; n: number }>(
        `SELECT memory_id, count(*)::int AS n FROM audit_events
          WHERE tenant_id = $1 AND action = 'expired' GROUP BY memory_id`,
        [a.tenantId],
      );
      expect(expired.rows.map((r) => r.memory_id).sort()).toEqual([...sessionMemoryIds].sort());
      expect(expired.rows.every((r) => r.n === 1)).toBe(true);

      // What each tenant holds: exactly what was stored, each once.
      const held = await client.query<{ tenant_id: string; content: string; reinforcement_count: number }>(
        'SELECT tenant_id, content, reinforcement_count FROM memories WHERE tenant_id = ANY($1::uuid[])',
        [[a.tenantId, b.tenantId]],
      );
      const contents = (tenantId: string) =>
        held.rows
          .filter((r) => r.tenant_id === tenantId)
          .map((r) => r.content)
          .sort();
      expect(contents(a.tenantId)).toEqual([...privateTexts.a, same].sort());
      expect(contents(b.tenantId)).toEqual([...privateTexts.b].sort());
      expect(held.rows.find((r) => r.content === same)?.reinforcement_count).toBe(2 * PROCESSES - 1);
      const created = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM audit_events WHERE tenant_id = $1 AND action = 'created'",
        [b.tenantId],
      );
      expect(created.rows[0]?.n).toBe(privateTexts.b.length);
    } finally {
      await client.end();
    }
    // Every process ended its sessions' sweeps without an error.
    expect(stderr.join('\n')).not.toMatch(/sweep failed/);
  });
});

describe.skipIf(!!process.env.TEST_DATABASE_URL)('two serve processes on one embedded folder', () => {
  const data = tempDir('agent-memory-replicas-');
  const children: ChildProcess[] = [];

  afterAll(async () => {
    for (const child of children) {
      child.kill('SIGTERM');
      await exited(child);
    }
    data.remove();
  });

  const serveOn = (port: number): { child: ChildProcess; stderr: () => string } => {
    let stderr = '';
    const child = spawnCli(
      ['serve'],
      childEnv({ DATA_DIR: data.dir, PORT: String(port), HOST: '127.0.0.1', SETUP_TOKEN, LOG_LEVEL: 'warn' }),
    );
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    children.push(child);
    return { child, stderr: () => stderr };
  };

  it(
    'refuses the second: PGlite is one process, and two would corrupt its folder',
    async () => {
      const first = serveOn(FIRST_PORT);
      const deadline = Date.now() + START_TIMEOUT_MS;
      for (;;) {
        if (first.child.exitCode !== null)
          throw new Error(`serve exited (${first.child.exitCode}):\n${first.stderr()}`);
        if (Date.now() > deadline) throw new Error(`serve did not become ready:\n${first.stderr()}`);
        const ready = await fetch(`http://127.0.0.1:${FIRST_PORT}/readyz`).then(
          (r) => r.ok,
          () => false,
        );
        if (ready) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      const second = serveOn(FIRST_PORT + 1);
      expect(await exited(second.child)).not.toBe(0);
      expect(second.stderr()).toMatch(new RegExp(`in use by process ${first.child.pid ?? -1}`));
      // The first goes on serving.
      expect((await fetch(`http://127.0.0.1:${FIRST_PORT}/readyz`)).status).toBe(200);
    },
    START_TIMEOUT_MS + 10_000,
  );
});
