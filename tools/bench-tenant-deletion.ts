/**
 * How long deleting a large tenant takes, and how long other tenants' creation waits meanwhile.
 *   DATABASE_URL=postgres://… npm run bench:tenant-deletion -- [--memories 10000] [--cascade]
 * Writes a throwaway tenant of --memories memories (inserted in bulk, statistics kept by the
 * triggers), then deletes it with deleteTenant (batches, then the tenant's row) or, with --cascade,
 * with one DELETE of its row, while a loop creates a tenant every 100 ms and times each creation.
 */
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { vectorParam } from '../src/db/vector.js';
import { upsertAnchor } from '../src/domain/subjects/anchors.js';
import { deleteTenant } from '../src/domain/tenancy/tenant-deletion.js';
import { createTenant } from '../src/domain/tenancy/tenants.js';
import { contentKey, newId } from '../src/domain/text.js';
import { startCore } from '../src/start-core.js';

const { values } = parseArgs({
  options: {
    memories: { type: 'string', default: '10000' },
    cascade: { type: 'boolean', default: false },
  },
});
const memories = Number(values.memories);
const config = loadConfig({
  ...process.env,
  DATA_DIR: process.env.DATA_DIR ?? ':memory:',
  EMBEDDER: 'hash',
  LOG_LEVEL: 'silent',
});
const running = await startCore(config, { log: pino({ level: 'silent' }) });
const round = (n: number) => Math.round(n);
try {
  const { core } = running;
  const tenant = await createTenant(core, `bench-delete-${Date.now()}`);
  const anchors: string[] = [];
  for (let i = 0; i < 20; i++) {
    const anchor = await upsertAnchor(core.db, tenant.tenantId, core.clock(), { externalId: `subject-${i}` });
    anchors.push(anchor.id);
  }
  const started = performance.now();
  for (let start = 0; start < memories; start += 250) {
    const texts = Array.from(
      { length: Math.min(250, memories - start) },
      (_, i) => `fact ${start + i} about topic ${(start + i) % 37} and order ${(start + i) * 7919}`,
    );
    const vectors = await core.embedder.embed(texts);
    const now = core.clock();
    await core.db
      .insertInto('memories')
      .values(
        texts.map((content, i) => ({
          tenant_id: tenant.tenantId,
          id: newId(),
          agent_id: 'bench',
          content,
          content_key: contentKey(content),
          binding: 'anchored' as const,
          anchor_id: anchors[(start + i) % anchors.length] as string,
          session_id: null,
          confidence: 0.7,
          decay_rate: 0.01,
          superseded_by: null,
          metadata: '{}',
          embedding: vectorParam(vectors[i] as Float32Array),
          embedder: core.embedder.id,
          created_at: now,
          updated_at: now,
          last_reinforced_at: now,
        })),
      )
      .execute();
  }
  console.log(`inserted ${memories} memories in ${round(performance.now() - started)} ms`);

  const waits: number[] = [];
  let deleting = true;
  const creations = (async () => {
    while (deleting) {
      const t0 = performance.now();
      await createTenant(core, `bench-setup-${newId()}`);
      waits.push(performance.now() - t0);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  const t0 = performance.now();
  if (values.cascade) await core.db.deleteFrom('tenants').where('id', '=', tenant.tenantId).execute();
  else await deleteTenant(core.db, tenant.tenantId);
  const took = performance.now() - t0;
  deleting = false;
  await creations;
  waits.sort((a, b) => a - b);
  console.log(`engine            ${running.engine}${running.citus ? ' (Citus)' : ''}`);
  console.log(`deletion          ${values.cascade ? 'one DELETE of the tenant (cascade)' : 'deleteTenant (batches)'}`);
  console.log(`deleted in        ${round(took)} ms (${memories} memories)`);
  console.log(
    `tenant creations  ${waits.length} meanwhile, median ${round(waits[Math.floor(waits.length / 2)] ?? NaN)} ms, ` +
      `longest ${round(waits.at(-1) ?? NaN)} ms`,
  );
} finally {
  await running.close();
}
