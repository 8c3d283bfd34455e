/**
 * Peak memory of a whole-tenant export: seeds a tenant with --memories memories by bulk INSERT,
 * then streams `exportTenant` to /dev/null while sampling the process's RSS and heap.
 *
 *   npx tsx tools/portability/export-rss.ts [--memories 100000] [--content-chars 300]
 *
 * DATABASE_URL set: that Postgres (a new tenant in it); else an embedded database in a temporary
 * folder, whose engine then runs in this process and counts in its RSS. Prints one JSON line.
 */
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { createTenant } from '../../src/domain/tenancy/tenants.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { exportTenant } from '../../src/portability/export.js';
import { startCore } from '../../src/start-core.js';
import { seedMemories } from './seed.js';

const { values } = parseArgs({
  options: {
    memories: { type: 'string', default: '100000' },
    'content-chars': { type: 'string', default: '300' },
  },
});
const count = Number(values.memories);
const contentChars = Number(values['content-chars']);
const dataDir = process.env.DATABASE_URL ? undefined : mkdtempSync(path.join(os.tmpdir(), 'agent-memory-rss-'));
const config = loadConfig({ ...process.env, DATA_DIR: dataDir ?? ':memory:', EMBEDDER: 'hash', LOG_LEVEL: 'silent' });
const embedder = createHashEmbedder(256);
const running = await startCore(config, { embedder, log: pino({ level: 'silent' }) });
try {
  const { core } = running;
  const tenant = await createTenant(core, `rss-${Date.now()}`);
  const seeded = performance.now();
  await seedMemories(core.db, tenant.tenantId, { count, contentChars, dimensions: 256, embedderId: embedder.id });
  process.stderr.write(`seeded ${count} memories in ${((performance.now() - seeded) / 1000).toFixed(1)} s\n`);

  const mib = (b: number) => Math.round((b / 1048576) * 10) / 10;
  const before = process.memoryUsage();
  let peakRss = before.rss;
  let peakHeap = before.heapUsed;
  const sample = () => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  };
  const timer = setInterval(sample, 20);
  const out = createWriteStream('/dev/null');
  let bytes = 0;
  const started = performance.now();
  const counts = await exportTenant(core, tenant.tenantId, { audit: false }, async (line) => {
    bytes += Buffer.byteLength(line);
    if (!out.write(line)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  });
  clearInterval(timer);
  sample();
  out.end();
  process.stdout.write(
    `${JSON.stringify({
      engine: running.engine,
      memories: counts.memories,
      export_mib: mib(bytes),
      seconds: Math.round((performance.now() - started) / 100) / 10,
      rss_before_mib: mib(before.rss),
      rss_peak_mib: mib(peakRss),
      heap_before_mib: mib(before.heapUsed),
      heap_peak_mib: mib(peakHeap),
    })}\n`,
  );
  // The seeded tenant goes with its rows (every table cascades from tenants).
  await core.db.deleteFrom('tenants').where('id', '=', tenant.tenantId).execute();
} finally {
  await running.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}
