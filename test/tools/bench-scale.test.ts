import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import type { Actor } from '../../src/domain/core.js';
import { storeMemory } from '../../src/domain/store/store.js';
import { contentKey } from '../../src/domain/text.js';
import { hashEmbed } from '../../src/embedding/hash.js';
import { startCore, type Running } from '../../src/start-core.js';
import { recall } from '../../src/retrieval/recall.js';
import { checkedFilter } from '../../src/filter/language.js';
import { prepareDataset, type Dataset } from '../../tools/bench-scale/dataset.js';
import {
  AGENT_BIG,
  AGENT_READER,
  SUBJECT_BIG,
  midSubject,
  storeSubject,
  typicalSubject,
  type Sizes,
} from '../../tools/bench-scale/plan.js';
import { jsonLine, table, type Results } from '../../tools/bench-scale/report.js';
import { measure } from '../../tools/bench-scale/run.js';
import { testConfig } from '../helpers/harness.js';
import { isolatedDatabase, type IsolatedDb } from '../helpers/isolated-db.js';

/** The scale benchmark's dataset in miniature: every scope it times, a few rows each. */
const SIZES: Sizes = {
  memories: 300,
  tenants: 2,
  subjects: 8,
  bigSubject: 40,
  bigAgent: 60,
  layout: { midSubjects: [20], typicalSubjects: 3, storeSubjects: 2, typicalSize: 10 },
};
const quiet = () => undefined;

let iso: IsolatedDb;
let config: Config;
let dataset: Dataset;
let running: Running;
let actor: Actor;

beforeAll(async () => {
  iso = await isolatedDatabase();
  config = testConfig({ ...iso.env, LOG_LEVEL: 'silent' });
  dataset = await prepareDataset(config, SIZES, { rebuild: false, reuse: false, progress: false, log: quiet });
  running = await startCore(config, { log: pino({ level: 'silent' }) });
  actor = { tenantId: dataset.marker.tenant_id, keyId: null, scopes: new Set(['read', 'write']) };
});

afterAll(async () => {
  await running?.close();
  await iso?.drop();
});

async function anchoredCount(externalId: string): Promise<number> {
  const row = await running.core.db
    .selectFrom('memories as m')
    .innerJoin('entities as e', (j) => j.onRef('e.tenant_id', '=', 'm.tenant_id').onRef('e.id', '=', 'm.anchor_id'))
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('m.tenant_id', '=', actor.tenantId)
    .where('e.external_id', '=', externalId)
    .where('m.binding', '=', 'anchored')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('bench:scale dataset', () => {
  it('holds the asked sizes: the total, each measured scope, canon per tenant', async () => {
    expect(dataset.built).toBe(true);
    expect(dataset.marker.memories).toBe(SIZES.memories);
    const total = await sql<{ n: number }>`SELECT count(*)::int AS n FROM memories`.execute(running.core.db);
    expect(total.rows[0]?.n).toBe(SIZES.memories);
    expect(await anchoredCount(SUBJECT_BIG)).toBe(40);
    expect(await anchoredCount(midSubject(20))).toBe(20);
    for (const name of [typicalSubject(0), typicalSubject(2), storeSubject(1)])
      expect(await anchoredCount(name)).toBe(10);
    const byBinding = await running.core.db
      .selectFrom('memories')
      .select(['tenant_id', 'binding', 'agent_id', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy(['tenant_id', 'binding', 'agent_id'])
      .execute();
    const count = (tenant: string, binding: string, agent?: string) =>
      byBinding
        .filter((r) => r.tenant_id === tenant && r.binding === binding && (agent === undefined || r.agent_id === agent))
        .reduce((n, r) => n + Number(r.n), 0);
    expect(count(actor.tenantId, 'private', AGENT_BIG)).toBe(60);
    expect(count(actor.tenantId, 'private', AGENT_READER)).toBe(0);
    const tenants = [...new Set(byBinding.map((r) => r.tenant_id))];
    expect(tenants).toHaveLength(2);
    for (const t of tenants) expect(count(t, 'canon')).toBe(10);
  });

  it('writes the rows the store path writes: derived columns, vectors, decay per binding, session order', async () => {
    const { core } = running;
    const rows = await sql<{
      content: string;
      content_key: string;
      binding: 'private' | 'anchored' | 'session' | 'canon';
      confidence: number;
      decay_rate: number;
      reinforcement_count: number;
      status: string;
      embedder: string;
      embedding: string;
      created_at: Date;
      updated_at: Date;
      last_reinforced_at: Date;
    }>`SELECT content, content_key, binding, confidence, decay_rate, reinforcement_count, status, embedder,
        embedding::text AS embedding, created_at, updated_at, last_reinforced_at FROM memories`.execute(core.db);
    for (const r of rows.rows) {
      expect(r.content_key).toBe(contentKey(r.content));
      expect(r.decay_rate).toBe(core.config.decayPerDay[r.binding]);
      expect(r.confidence).toBe(r.binding === 'canon' ? 1 : core.config.initialConfidence);
      expect([r.status, r.reinforcement_count, r.embedder]).toEqual(['active', 0, core.embedder.id]);
      expect(r.updated_at.getTime()).toBe(r.created_at.getTime());
      expect(r.last_reinforced_at.getTime()).toBe(r.created_at.getTime());
      const stored = r.embedding
        .slice(1, -1)
        .split(',')
        .map((x) => Math.fround(Number(x)));
      expect(stored).toEqual(Array.from(hashEmbed(r.content, core.embedder.dimensions)));
    }
    // Session memories only in live sessions, and every session's memories in store order.
    const misplaced = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM memories m JOIN sessions s ON s.tenant_id = m.tenant_id AND s.id = m.session_id
      WHERE (m.binding = 'session' AND s.status <> 'active') OR s.anchor_id IS DISTINCT FROM m.anchor_id`.execute(
      core.db,
    );
    expect(misplaced.rows[0]?.n).toBe(0);
    const disorder = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM (
        SELECT created_at < lag(created_at) OVER (PARTITION BY tenant_id, session_id ORDER BY seq) AS back
        FROM memories WHERE session_id IS NOT NULL) x WHERE back`.execute(core.db);
    expect(disorder.rows[0]?.n).toBe(0);
  });

  it('is what the domain core recalls and reinforces', async () => {
    const { core } = running;
    const subject = await recall(core, actor, {
      agentId: AGENT_READER,
      query: 'customer order payment',
      anchor: { anchorExternalId: typicalSubject(1) },
      limit: 100,
      includeSuperseded: false,
    });
    expect(subject.filter((r) => r.binding === 'anchored')).toHaveLength(10);
    expect(new Set(subject.filter((r) => r.binding !== 'canon').map((r) => r.anchor_external_id))).toEqual(
      new Set([typicalSubject(1)]),
    );
    const privateScope = await recall(core, actor, {
      agentId: AGENT_BIG,
      query: 'customer order payment',
      anchor: {},
      limit: 100,
      includeSuperseded: false,
    });
    expect(privateScope.filter((r) => r.binding === 'private')).toHaveLength(60);
    // Storing a text the subject already holds finds the loaded row and reinforces it.
    const held = subject.find((r) => r.binding === 'anchored');
    const again = await storeMemory(core, actor, {
      agentId: AGENT_READER,
      content: held?.content ?? '',
      anchor: { anchorExternalId: typicalSubject(1) },
    });
    expect([again.outcome, again.memory.id]).toEqual(['reinforced', held?.id]);
  });

  it('is reused by a second run of the same sizes', async () => {
    await running.close();
    try {
      const second = await prepareDataset(config, SIZES, { rebuild: false, reuse: false, progress: false, log: quiet });
      expect(second.built).toBe(false);
      expect(second.marker.tenant_id).toBe(dataset.marker.tenant_id);
    } finally {
      running = await startCore(config, { log: pino({ level: 'silent' }) });
    }
  });
});

describe('bench:scale measurement', () => {
  it('times the big subject under filters, and the filtered recalls return only what passes', async () => {
    const server: Server = createApp(running.core).listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    const { port } = server.address() as AddressInfo;
    try {
      const measured = await measure(`http://127.0.0.1:${port}`, dataset.apiKey, dataset.marker.sizes, {
        queries: 3,
        scopeSeconds: 5,
        seconds: 0.2,
        concurrency: [1],
        stores: 1,
        filter: true,
        log: quiet,
      });
      const filtered = measured.recall.filter((r) => r.label.includes('filter'));
      expect(filtered.map((r) => [r.label, r.size, r.latency.errors])).toEqual([
        [`${SUBJECT_BIG}, topic filter`, 4, 0],
        [`${SUBJECT_BIG}, rare filter`, 1, 0],
      ]);
      for (const [filter, passing] of [
        [{ 'metadata.topic': 't3' }, 4],
        [{ 'metadata.rare': true }, 1],
      ] as const) {
        const results = await recall(running.core, actor, {
          agentId: AGENT_READER,
          query: 'customer order payment',
          anchor: { anchorExternalId: SUBJECT_BIG },
          limit: 100,
          includeSuperseded: false,
          filter: checkedFilter(filter),
        });
        expect(results.filter((r) => r.binding === 'anchored')).toHaveLength(passing);
        expect(results.every((r) => r.binding === 'anchored')).toBe(true);
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('times every scope over HTTP and ends with one JSON line holding the agreed keys', async () => {
    const server: Server = createApp(running.core).listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    const { port } = server.address() as AddressInfo;
    try {
      const measured = await measure(`http://127.0.0.1:${port}`, dataset.apiKey, dataset.marker.sizes, {
        queries: 5,
        scopeSeconds: 5,
        seconds: 0.5,
        concurrency: [1, 4],
        stores: 3,
        log: quiet,
      });
      const results: Results = {
        engine: running.engine,
        memories: dataset.marker.memories,
        embedder: dataset.marker.embedder,
        build: { ...dataset.marker, reused: false },
        ...measured,
        serverRssMb: null,
      };
      expect(table(results)).toContain('recall');
      const json = JSON.parse(jsonLine(results));
      for (const key of ['recall_p50_ms_by_scope', 'recall_p95_ms_by_scope', 'recall_p99_ms_by_scope']) {
        expect(Object.keys(json[key]).sort()).toEqual(['10', '20', '40', '60']);
        for (const ms of Object.values(json[key])) expect(ms).toBeGreaterThan(0);
      }
      expect(json.recall_errors_by_scope).toEqual({ 10: 0, 20: 0, 40: 0, 60: 0 });
      // The typical subjects' time, split by the server's own metrics: the client waits for the
      // whole request, which holds the recall.
      const means = json.typical_mean_ms as { client: number; server_request: number; recall: number };
      expect(means.recall).toBeGreaterThan(0);
      expect(means.server_request).toBeGreaterThanOrEqual(means.recall);
      expect(means.client).toBeGreaterThanOrEqual(means.server_request);
      expect(table(results)).toContain('ms in recall');
      expect(Object.keys(json.recalls_per_second_by_concurrency)).toEqual(['1', '4']);
      expect(json.recalls_per_second_by_concurrency['4']).toBeGreaterThan(0);
      expect(json.errors_by_concurrency).toEqual({ 1: 0, 4: 0 });
      expect(json.store_p50_ms.new).toBeGreaterThan(0);
      expect(json.store_p50_ms.reinforce).toBeGreaterThan(0);
      expect(json).toMatchObject({ engine: running.engine, memories: 300, server_rss_mb: null });
      // The stores were taken back: the store subjects hold what they were built with.
      expect(await anchoredCount(storeSubject(0))).toBe(10);
      expect(await anchoredCount(storeSubject(1))).toBe(10);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
