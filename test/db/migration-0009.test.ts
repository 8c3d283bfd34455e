import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toVectorLiteral } from '../../src/db/vector.js';
import { authenticate, generateApiKey, hashApiKey } from '../../src/domain/tenancy/keys.js';
import { newId } from '../../src/domain/text.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import type { Running } from '../../src/start-core.js';
import { engine, newTenant } from '../helpers/harness.js';
import { startedAfter } from '../helpers/earlier-schema.js';
import type { IsolatedDb } from '../helpers/isolated-db.js';
import { storeMemory } from '../helpers/store-recall.js';
import { createApp } from '../../src/app.js';
import request from 'supertest';

const embedder = createHashEmbedder(32);

/**
 * A database as it stood before migration 0009 (its migrations applied, a key, a memory and an
 * audit event written then), started with 0009: the old key still authenticates, and the sequences
 * that replaced the identity columns continue past the numbers already given.
 */
describe(`migration 0009 on a database in use, on ${engine}`, () => {
  let iso: IsolatedDb;
  let running: Running;
  const oldKey = generateApiKey(true);
  const tenantId = newId();

  beforeAll(async () => {
    ({ iso, running } = await startedAfter(
      (f) => f < '0009',
      async (db) => {
        const now = new Date();
        const vector = toVectorLiteral(new Float32Array(embedder.dimensions).fill(0.1));
        await sql`INSERT INTO tenants (id, org_name) VALUES (${tenantId}, ${`org-${tenantId}`})`.execute(db);
        await sql`INSERT INTO api_keys (tenant_id, id, name, key_prefix, key_hash, scopes)
          VALUES (${tenantId}, ${newId()}, 'old', ${oldKey.slice(0, 12)}, ${hashApiKey(oldKey)},
            ${['read', 'write', 'admin']})`.execute(db);
        for (let i = 0; i < 3; i++) {
          await sql`INSERT INTO memories (tenant_id, id, agent_id, content, content_key, binding, confidence,
              decay_rate, embedding, embedder, created_at, updated_at, last_reinforced_at)
            VALUES (${tenantId}, ${newId()}, 'a', ${`old fact ${i}`}, ${`old fact ${i}`}, 'private', 0.7, 0,
              ${vector}::vector, ${embedder.id}, ${now}, ${now}, ${now})`.execute(db);
          await sql`INSERT INTO audit_events (tenant_id, id, at, action) VALUES (${tenantId}, ${newId()}, ${now}, 'key_created')`.execute(
            db,
          );
        }
      },
      embedder,
    ));
  });

  afterAll(async () => {
    await running?.close();
    await iso.drop();
  });

  it('routes a key made before it to its tenant', async () => {
    const actor = await authenticate(running.core, oldKey);
    expect(actor?.tenantId).toBe(tenantId);
    const routed = await running.core.db
      .selectFrom('api_key_tenants')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .execute();
    // PGlite gives bytea as a Uint8Array, pg as a Buffer.
    expect(routed.map((r) => ({ ...r, key_hash: Buffer.from(r.key_hash) }))).toEqual([
      { key_hash: hashApiKey(oldKey), tenant_id: tenantId },
    ]);
  });

  it('records the tenant of every key made after it, and refuses a key it does not know', async () => {
    const api = { app: createApp(running.core), core: running.core, http: request(createApp(running.core)) };
    const tenant = await newTenant(api);
    const res = await api.http
      .post('/v1/keys')
      .set(tenant.auth)
      .send({ name: 'later', scopes: ['read'] });
    expect(res.status).toBe(201);
    const later = (res.body as { api_key: string }).api_key;
    expect((await authenticate(running.core, later))?.tenantId).toBe(tenant.tenantId);
    expect(await authenticate(running.core, generateApiKey(false))).toBeNull();
    await storeMemory(api, tenant.auth, { agent_id: 'a', content: 'a fact stored after the migration' });
  });

  it('numbers new memories and audit events after the ones already there', async () => {
    const { db } = running.core;
    const seqs = await sql<{ table: string; old_max: number; new_min: number }>`
      SELECT 'memories' AS table,
        max(seq) FILTER (WHERE tenant_id = ${tenantId}) AS old_max, min(seq) FILTER (WHERE tenant_id <> ${tenantId}) AS new_min
      FROM memories
      UNION ALL
      SELECT 'audit_events', max(seq) FILTER (WHERE tenant_id = ${tenantId}), min(seq) FILTER (WHERE tenant_id <> ${tenantId})
      FROM audit_events`.execute(db);
    expect(seqs.rows).toEqual([
      { table: 'memories', old_max: 3, new_min: 4 },
      { table: 'audit_events', old_max: 3, new_min: 4 },
    ]);
    const identities = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM information_schema.columns
      WHERE table_schema = current_schema() AND is_identity = 'YES'`.execute(db);
    expect(identities.rows[0]?.n).toBe(0);
  });
});
