/**
 * Store throughput and recall latency through the real domain core.
 *   npm run bench:recall -- [--memories 1000] [--queries 200] [--embedder hash|local]
 * Uses an in-memory embedded database unless DATABASE_URL is set (then it writes a throwaway tenant).
 */
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import type { Actor } from '../src/domain/core.js';
import { storeMemory } from '../src/domain/store/store.js';
import { createTenant } from '../src/domain/tenancy/tenants.js';
import { startCore } from '../src/start-core.js';
import { recall } from '../src/retrieval/recall.js';

const { values } = parseArgs({
  options: {
    memories: { type: 'string', default: '1000' },
    queries: { type: 'string', default: '200' },
    embedder: { type: 'string', default: 'hash' },
  },
});
const memories = Number(values.memories);
const queries = Number(values.queries);

const TOPICS = [
  'billing',
  'shipping',
  'allergy',
  'meeting',
  'budget',
  'travel',
  'contract',
  'family',
  'hobby',
  'device',
];
const VERBS = ['prefers', 'mentioned', 'asked about', 'is worried about', 'changed', 'confirmed'];
const fact = (i: number): string =>
  `The customer ${VERBS[i % VERBS.length]} ${TOPICS[i % TOPICS.length]} item ${i} on day ${i % 31} with code ${(i * 7919) % 10007}`;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const config = loadConfig({
  ...process.env,
  DATA_DIR: process.env.DATA_DIR ?? ':memory:',
  EMBEDDER: values.embedder,
  LOG_LEVEL: 'silent',
});
const running = await startCore(config, { log: pino({ level: 'silent' }) });
try {
  const { core } = running;
  const tenant = await createTenant(core, `bench-${Date.now()}`);
  const actor: Actor = { tenantId: tenant.tenantId, keyId: tenant.keyId, scopes: new Set(['read', 'write', 'admin']) };

  const storeStart = performance.now();
  for (let i = 0; i < memories; i++) {
    await storeMemory(core, actor, { agentId: 'bench', content: fact(i), anchor: { anchorExternalId: 'subject-1' } });
    if (i % 100 === 0) process.stderr.write(`\rstored ${i}/${memories}`);
  }
  const storeSeconds = (performance.now() - storeStart) / 1000;
  process.stderr.write(`\rstored ${memories}/${memories}\n`);

  const latencies: number[] = [];
  for (let q = 0; q < queries; q++) {
    const started = performance.now();
    await recall(core, actor, {
      agentId: 'bench',
      query: `what did the customer say about ${TOPICS[q % TOPICS.length]} on day ${q % 31}`,
      anchor: { anchorExternalId: 'subject-1' },
      limit: 10,
      includeSuperseded: false,
    });
    latencies.push(performance.now() - started);
  }
  latencies.sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 10) / 10;
  console.log(`engine            ${running.engine}`);
  console.log(`embedder          ${core.embedder.id}`);
  console.log(`memories          ${memories} (one subject)`);
  console.log(`store throughput  ${round(memories / storeSeconds)} memories/s`);
  console.log(
    `recall latency    p50 ${round(percentile(latencies, 50))} ms, p95 ${round(percentile(latencies, 95))} ms (${queries} queries, limit 10)`,
  );
} finally {
  await running.close();
}
