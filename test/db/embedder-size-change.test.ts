import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vectorIndexDimensions } from '../../src/db/vector.js';
import type { Actor } from '../../src/domain/core.js';
import { storeMemory } from '../../src/domain/store/store.js';
import { createTenant } from '../../src/domain/tenancy/tenants.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { startCore } from '../../src/start-core.js';
import { engine, testConfig } from '../helpers/harness.js';
import { isolatedDatabase, type IsolatedDb } from '../helpers/isolated-db.js';

/**
 * `migrate` with one embedder, then `serve` with another of another size, on a database that holds
 * no memory yet: the first size's vector index must go, or it refuses every vector of the second
 * ("expected 32 dimensions, not 16") and no store succeeds.
 */
describe(`starting with an embedder of another size on an empty database, on ${engine}`, () => {
  let iso: IsolatedDb;
  const log = pino({ level: 'silent' });

  beforeAll(async () => {
    iso = await isolatedDatabase();
  });

  afterAll(async () => {
    await iso.drop();
  });

  it('drops the previous size’s index, builds the new one, and stores', async () => {
    const first = await startCore(testConfig(iso.env), { embedder: createHashEmbedder(32), log });
    expect(await vectorIndexDimensions(first.core.db)).toEqual([32]);
    await first.close();

    const second = await startCore(testConfig(iso.env), { embedder: createHashEmbedder(16), log });
    try {
      const { core } = second;
      expect(await vectorIndexDimensions(core.db)).toEqual([16]);
      const tenant = await createTenant(core, 'resized-org');
      const actor: Actor = { tenantId: tenant.tenantId, keyId: tenant.keyId, scopes: new Set(['admin']) };
      const stored = await storeMemory(core, actor, { agentId: 'a', content: 'Ada plays the cello', anchor: {} });
      expect(stored.memory.content).toBe('Ada plays the cello');
    } finally {
      await second.close();
    }
  });
});
