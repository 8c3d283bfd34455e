import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { openReadReplica, type Db, type DbHandle } from '../../src/db/connect.js';
import type { Actor, Core } from '../../src/domain/core.js';
import { ReadReplicas } from '../../src/db/read-replicas.js';
import request from 'supertest';
import { newKey, newTenant, testApi, testCore, type TestApi } from '../helpers/harness.js';
import { inProcessClient, ok } from '../helpers/mcp.js';

/**
 * Which database recall reads with DATABASE_READ_URL set (src/db/read-replicas.ts), on either
 * engine: the "replica" here is the primary itself, or a pool to a port where nothing listens, so
 * that the choice is seen in the router's counts. test/db/streaming-replica.test.ts runs recall on
 * a real hot standby.
 */

const actor = (keyId: string | null, tenantId = 't1'): Actor => ({ tenantId, keyId, scopes: new Set(['read']) });

describe('DATABASE_READ_URL', () => {
  it('takes one or more postgres URLs, and needs DATABASE_URL', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://p@h/db',
      DATABASE_READ_URL: 'postgres://r1@h/db, postgresql://r2@h/db,',
    });
    expect(config.databaseReadUrls).toEqual(['postgres://r1@h/db', 'postgresql://r2@h/db']);
    expect(config.readAfterWriteMs).toBe(10_000);
    expect(loadConfig({}).databaseReadUrls).toEqual([]);
    expect(() => loadConfig({ DATABASE_READ_URL: 'postgres://r1@h/db' })).toThrow(/DATABASE_READ_URL: .*DATABASE_URL/);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://p@h/db', DATABASE_READ_URL: 'mysql://r@h/db' })).toThrow(
      ConfigError,
    );
  });
});

describe('the read router', () => {
  const primary = { name: 'primary' } as unknown as Db;
  const r1 = { name: 'r1' } as unknown as Db;
  const r2 = { name: 'r2' } as unknown as Db;

  it('spreads reads over the replicas in turn', () => {
    const reads = new ReadReplicas(primary, [r1, r2], 1000, () => 0);
    const picked = [1, 2, 3, 4].map(() => reads.forRead(actor('k')));
    expect(picked.map((p) => p.db)).toEqual([r1, r2, r1, r2]);
    expect(picked.every((p) => p.target === 'replica')).toBe(true);
  });

  it("sends a key's reads to the primary for the window after its write, and only that key's", () => {
    let now = 0;
    const reads = new ReadReplicas(primary, [r1], 1000, () => now);
    reads.wrote(actor('writer'));
    now = 999;
    expect(reads.forRead(actor('writer'))).toEqual({ db: primary, target: 'primary' });
    expect(reads.forRead(actor('other'))).toEqual({ db: r1, target: 'replica' });
    now = 1000;
    expect(reads.forRead(actor('writer'))).toEqual({ db: r1, target: 'replica' });
  });

  it('counts a keyless writer (stdio) by its tenant', () => {
    const reads = new ReadReplicas(primary, [r1], 1000, () => 0);
    reads.wrote(actor(null, 'tenant-a'));
    expect(reads.forRead(actor(null, 'tenant-a')).target).toBe('primary');
    expect(reads.forRead(actor(null, 'tenant-b')).target).toBe('replica');
  });
});

describe('recall with read replicas', () => {
  const opened: DbHandle[] = [];
  afterAll(async () => {
    for (const handle of opened) await handle.close();
  });

  /** An app whose core routes recall through a router with these replicas. */
  async function apiWith(
    replicas: (core: Core) => Db[],
    afterWriteMs = 60_000,
  ): Promise<TestApi & { reads: ReadReplicas }> {
    const base = await testCore();
    const reads = new ReadReplicas(base.db, replicas(base), afterWriteMs);
    const core: Core = { ...base, reads };
    const app = createApp(core);
    return { app, core, http: request(app), reads };
  }

  const recallOf = async (api: TestApi, auth: { Authorization: string }, query: string): Promise<string[]> => {
    const res = await api.http.get('/v1/memories/recall').set(auth).query({ agent_id: 'a', query });
    expect(res.status).toBe(200);
    return (res.body as { results: { content: string }[] }).results.map((r) => r.content);
  };

  it('reads the primary after a REST or MCP write by the same key, a replica for other keys', async () => {
    const api = await apiWith((core) => [core.db]);
    const tenant = await newTenant(api);
    const writer = await newKey(api, tenant, ['read', 'write']);
    const reader = await newKey(api, tenant, ['read']);
    const stored = await api.http
      .post('/v1/memories')
      .set(writer.auth)
      .send({ agent_id: 'a', content: 'The customer prefers email over phone calls' });
    expect(stored.status).toBe(201);

    expect(await recallOf(api, writer.auth, 'email or phone')).toContain('The customer prefers email over phone calls');
    expect(api.reads.totals()).toEqual({ replica: 0, primary: 1, fallback: 0 });
    await recallOf(api, reader.auth, 'email or phone');
    expect(api.reads.totals()).toEqual({ replica: 1, primary: 1, fallback: 0 });

    // Over MCP: remember is a write, recall is not.
    const mcpKey = await newKey(api, tenant, ['read', 'write']);
    const { authenticate } = await import('../../src/domain/tenancy/keys.js');
    const mcpActor = await authenticate(api.core, mcpKey.auth.Authorization.replace('Bearer ', ''));
    if (!mcpActor) throw new Error('no actor');
    const mcp = await inProcessClient(api.core, { actor: mcpActor, agentId: 'a' });
    try {
      await ok(mcp.client, 'recall', { query: 'email' });
      expect(api.reads.totals()).toEqual({ replica: 2, primary: 1, fallback: 0 });
      await ok(mcp.client, 'remember', { content: 'The customer works night shifts' });
      await ok(mcp.client, 'recall', { query: 'night shifts' });
      expect(api.reads.totals()).toEqual({ replica: 2, primary: 2, fallback: 0 });
    } finally {
      await mcp.close();
    }
  });

  it('reads the primary when a replica does not answer, and /readyz and /metrics say so', async () => {
    const api = await apiWith(() => {
      // Nothing listens on this port of the project's range: the connection is refused.
      const dead = openReadReplica('postgres://postgres@127.0.0.1:7599/none', 2);
      opened.push(dead);
      return [dead.db];
    });
    const tenant = await newTenant(api);
    const writer = await newKey(api, tenant, ['read', 'write']);
    const reader = await newKey(api, tenant, ['read']);
    await api.http
      .post('/v1/memories')
      .set(writer.auth)
      .send({ agent_id: 'a', content: 'Invoices go to the finance mailbox' })
      .expect(201);
    expect(await recallOf(api, reader.auth, 'where do invoices go')).toEqual(['Invoices go to the finance mailbox']);
    expect(api.reads.totals()).toEqual({ replica: 0, primary: 0, fallback: 1 });

    const ready = await api.http.get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', read_replicas: { configured: 1, answering: 0 } });
    const metrics = await api.http.get('/metrics');
    expect(metrics.text).toContain('agent_memory_read_replicas 1');
    expect(metrics.text).toContain('agent_memory_recall_reads_total{database="fallback"} 1');
  });

  it('answers /readyz without read_replicas when none is configured', async () => {
    const api = await testApi();
    expect((await api.http.get('/readyz')).body).toEqual({ status: 'ready' });
  });
});
