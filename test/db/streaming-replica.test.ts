import pg from 'pg';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import type { ReadReplicas } from '../../src/db/read-replicas.js';
import { startCore, type Running } from '../../src/start-core.js';
import { newKey, newTenant, testConfig, type TestApi } from '../helpers/harness.js';

/**
 * Recall on a real hot standby: TEST_READ_DATABASE_URL is TEST_DATABASE_URL's database on a
 * streaming replica of its cluster (.ci/replica builds one). Replay is paused on the replica to
 * make its lag as long as the test needs: a recall that reads the replica then misses the newest
 * write, and one that reads the primary (read-your-writes) sees it.
 */
const readUrl = process.env.TEST_READ_DATABASE_URL;
const primaryUrl = process.env.TEST_DATABASE_URL;

describe.skipIf(!readUrl || !primaryUrl)('recall on a streaming replica (TEST_READ_DATABASE_URL)', () => {
  let running: Running;
  let api: TestApi;
  let reads: ReadReplicas;
  let primary: pg.Client;
  let replica: pg.Client;

  /** Until the replica has replayed everything the primary has written so far. */
  async function caughtUp(): Promise<void> {
    const target = (await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn() AS lsn')).rows[0]?.lsn;
    for (let i = 0; i < 300; i++) {
      const behind = await replica.query<{ behind: boolean }>(
        'SELECT coalesce(pg_last_wal_replay_lsn() < $1::pg_lsn, true) AS behind',
        [target],
      );
      if (behind.rows[0]?.behind === false) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the replica did not catch up in 30 s');
  }

  beforeAll(async () => {
    primary = new pg.Client({ connectionString: primaryUrl });
    replica = new pg.Client({ connectionString: readUrl });
    await primary.connect();
    await replica.connect();
    running = await startCore(testConfig({ DATABASE_READ_URL: readUrl ?? '', READ_AFTER_WRITE_MS: '600000' }), {
      embedder: createHashEmbedder(256),
      log: pino({ level: 'silent' }),
    });
    if (!running.core.reads) throw new Error('DATABASE_READ_URL did not make read replicas');
    reads = running.core.reads;
    const app = createApp(running.core);
    api = { app, core: running.core, http: request(app) };
  });

  afterAll(async () => {
    // Never leave the shared replica paused for the next run.
    await replica?.query('SELECT pg_wal_replay_resume()').catch(() => undefined);
    await replica?.end();
    await primary?.end();
    await running?.close();
  });

  const recalled = async (auth: { Authorization: string }, query: string): Promise<string[]> => {
    const res = await api.http.get('/v1/memories/recall').set(auth).query({ agent_id: 'a', query });
    if (res.status !== 200) throw new Error(`recall: ${res.status} ${JSON.stringify(res.body)}`);
    return (res.body as { results: { content: string }[] }).results.map((r) => r.content);
  };

  it('is a hot standby of the primary', async () => {
    expect((await replica.query('SELECT pg_is_in_recovery() AS r')).rows[0]).toEqual({ r: true });
    expect((await primary.query('SELECT pg_is_in_recovery() AS r')).rows[0]).toEqual({ r: false });
  });

  it("reads the replica, without writing, and a writer's own recalls read the primary while the replica lags", async () => {
    const tenant = await newTenant(api);
    const writer = await newKey(api, tenant, ['read', 'write']);
    const reader = await newKey(api, tenant, ['read']);
    await api.http
      .post('/v1/memories')
      .set(writer.auth)
      .send({ agent_id: 'a', content: 'The customer prefers email over phone calls' })
      .expect(201);
    await caughtUp();
    const before = reads.totals();
    // The standby refuses any write: a recall that wrote would fail here, not fall back.
    expect(await recalled(reader.auth, 'email or phone')).toEqual(['The customer prefers email over phone calls']);
    expect(reads.totals()).toEqual({ ...before, replica: before.replica + 1 });

    await replica.query('SELECT pg_wal_replay_pause()');
    try {
      await api.http
        .post('/v1/memories')
        .set(writer.auth)
        .send({ agent_id: 'a', content: 'The customer moved to Lisbon in March' })
        .expect(201);
      // The replica has not replayed the store: a recall reading it cannot see the new memory.
      expect(await recalled(reader.auth, 'where does the customer live Lisbon')).not.toContain(
        'The customer moved to Lisbon in March',
      );
      // The writer reads its own write: its recalls go to the primary for READ_AFTER_WRITE_MS.
      expect(await recalled(writer.auth, 'where does the customer live Lisbon')).toContain(
        'The customer moved to Lisbon in March',
      );
      expect(reads.totals()).toEqual({ ...before, replica: before.replica + 2, primary: before.primary + 1 });
    } finally {
      await replica.query('SELECT pg_wal_replay_resume()');
    }
    await caughtUp();
    expect(await recalled(reader.auth, 'where does the customer live Lisbon')).toContain(
      'The customer moved to Lisbon in March',
    );
    expect(reads.totals().fallback).toBe(before.fallback);
  });

  it('says on /readyz that the replica answers', async () => {
    expect((await api.http.get('/readyz')).body).toEqual({
      status: 'ready',
      read_replicas: { configured: 1, answering: 1 },
    });
  });
});
