import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor, Core } from '../../src/domain/core.js';
import { storeMemory } from '../../src/domain/store/store.js';
import { createTenant } from '../../src/domain/tenancy/tenants.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { startCore, type Running } from '../../src/start-core.js';
import { engine, testConfig } from '../helpers/harness.js';

const COLOURS = Array.from(
  { length: 50 },
  (_, i) => `shade${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`,
);

// Two connection pools stand for two server processes; PGlite has one connection, so only a server
// can race at all.
describe.skipIf(engine !== 'postgres')('concurrent stores from two pools', () => {
  let pools: Running[] = [];
  let actor: Actor;

  beforeAll(async () => {
    const start = () => startCore(testConfig(), { embedder: createHashEmbedder(256), log: pino({ level: 'silent' }) });
    pools = [await start(), await start()];
    const tenant = await createTenant(pools[0]!.core, `race-${randomUUID()}`);
    actor = { tenantId: tenant.tenantId, keyId: tenant.keyId, scopes: new Set(['read', 'write', 'admin']) };
  });
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.close()));
  });

  const cores = (): Core[] => pools.map((p) => p.core);

  it('stores one fact 50 times at once: exactly one memory with 49 reinforcements', async () => {
    const subject = `s-${randomUUID()}`;
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        storeMemory(cores()[i % 2]!, actor, {
          agentId: 'a',
          content: 'Prefers morning calls',
          anchor: { anchorExternalId: subject },
        }),
      ),
    );
    const ids = new Set(results.map((r) => r.memory.id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.outcome === 'created')).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'reinforced')).toHaveLength(49);
    const row = await cores()[0]!
      .db.selectFrom('memories')
      .select(['reinforcement_count'])
      .where('tenant_id', '=', actor.tenantId)
      .where('content', '=', 'Prefers morning calls')
      .execute();
    expect(row).toEqual([{ reinforcement_count: 49 }]);
  });

  it('loses none of 50 different facts stored at once', async () => {
    const subject = `s-${randomUUID()}`;
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        storeMemory(cores()[i % 2]!, actor, {
          agentId: 'a',
          // Multi-valued (likes) with distinct objects: compatible facts, none may supersede another.
          content: `Likes the colour ${COLOURS[i]}`,
          anchor: { anchorExternalId: subject },
        }),
      ),
    );
    const rows = await cores()[0]!
      .db.selectFrom('memories as m')
      .innerJoin('entities as e', (j) => j.onRef('e.tenant_id', '=', 'm.tenant_id').onRef('e.id', '=', 'm.anchor_id'))
      .select(['m.content', 'm.status'])
      .where('m.tenant_id', '=', actor.tenantId)
      .where('e.external_id', '=', subject)
      .execute();
    expect(rows).toHaveLength(50);
    expect(new Set(rows.map((r) => r.content)).size).toBe(50);
    expect(rows.every((r) => r.status === 'active')).toBe(true);
  });
});
