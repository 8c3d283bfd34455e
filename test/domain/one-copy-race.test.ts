import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor, Core } from '../../src/domain/core.js';
import { createSession } from '../../src/domain/subjects/sessions.js';
import { storeMemory } from '../../src/domain/store/store.js';
import { createTenant } from '../../src/domain/tenancy/tenants.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { startCore, type Running } from '../../src/start-core.js';
import { engine, testConfig } from '../helpers/harness.js';

// Two connection pools stand for two server processes; PGlite has one connection, so only a server
// can race at all.
describe.skipIf(engine !== 'postgres')(
  'one fact stored at once from many sessions and as durable, from two pools',
  () => {
    let pools: Running[] = [];
    let actor: Actor;

    beforeAll(async () => {
      const start = () =>
        startCore(testConfig(), { embedder: createHashEmbedder(256), log: pino({ level: 'silent' }) });
      pools = [await start(), await start()];
      const tenant = await createTenant(pools[0]!.core, `one-copy-${randomUUID()}`);
      actor = { tenantId: tenant.tenantId, keyId: tenant.keyId, scopes: new Set(['read', 'write', 'admin']) };
    });
    afterAll(async () => {
      await Promise.all(pools.map((p) => p.close()));
    });

    const core = (i: number): Core => pools[i % 2]!.core;

    it('leaves one anchored copy in the profile', async () => {
      for (let round = 0; round < 3; round++) {
        const external = `s-${randomUUID()}`;
        const sessions = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            createSession(core(i), actor, { agentId: 'a', anchor: { anchorExternalId: external } }),
          ),
        );
        const anchorId = sessions[0]?.anchor_id ?? '';
        await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            storeMemory(core(i), actor, {
              agentId: 'a',
              content: 'Drives an electric car',
              anchor: i % 5 === 0 ? { anchorId } : {},
              sessionId: sessions[i % 10]?.id,
            }),
          ),
        );
        const active = await core(0)
          .db.selectFrom('memories')
          .select(['binding', 'reinforcement_count'])
          .where('tenant_id', '=', actor.tenantId)
          .where('anchor_id', '=', anchorId)
          .where('status', '=', 'active')
          .execute();
        expect(active.filter((m) => m.binding === 'anchored')).toHaveLength(1);
      }
    });
  },
);
