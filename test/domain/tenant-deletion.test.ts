import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { deleteTenant } from '../../src/domain/tenancy/tenant-deletion.js';
import { engine, newTenant, testApi, type TestApi } from '../helpers/harness.js';
import { createAnchor, startSession, storeMemory } from '../helpers/store-recall.js';

/** Rows the tenant holds in every table that carries tenant_id. */
async function rowsOf(api: TestApi, tenantId: string): Promise<Record<string, number>> {
  const { rows } = await sql<{ table: string }>`
    SELECT c.table_name AS table FROM information_schema.columns AS c
    JOIN information_schema.tables AS t ON t.table_name = c.table_name AND t.table_schema = c.table_schema
    WHERE c.column_name = 'tenant_id' AND c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
    ORDER BY 1`.execute(api.core.db);
  const counts: Record<string, number> = {};
  for (const { table } of rows) {
    const counted = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM ${sql.table(table)} WHERE tenant_id = ${tenantId}`.execute(api.core.db);
    counts[table] = counted.rows[0]?.n ?? 0;
  }
  const tenant = await sql<{ n: number }>`SELECT count(*)::int AS n FROM tenants WHERE id = ${tenantId}`.execute(
    api.core.db,
  );
  counts.tenants = tenant.rows[0]?.n ?? 0;
  return counts;
}

describe(`deleting a tenant, on ${engine}`, () => {
  it('deletes everything it holds, in batches, and nothing of another tenant', async () => {
    const api = await testApi();
    const [doomed, kept] = [await newTenant(api), await newTenant(api)];
    for (const t of [doomed, kept]) {
      const anchorId = await createAnchor(api, t.auth, 'customer');
      const session = await startSession(api, t.auth, { agent_id: 'bot', anchor_id: anchorId });
      for (let i = 0; i < 7; i++) {
        await storeMemory(api, t.auth, { agent_id: 'bot', anchor_id: anchorId, content: `Ordered item ${i} in May` });
        await storeMemory(api, t.auth, { agent_id: 'bot', session_id: session, content: `Said thing ${i} today` });
      }
    }
    const keptBefore = await rowsOf(api, kept.tenantId);
    const before = await rowsOf(api, doomed.tenantId);
    expect(before.memories).toBe(14);
    expect(before.memory_term_stats).toBeGreaterThan(0);
    expect(before.audit_events).toBeGreaterThan(3);

    // Batches of 3: the memories and audit events take several transactions each.
    expect(await deleteTenant(api.core.db, doomed.tenantId, 3)).toBe(true);
    const after = await rowsOf(api, doomed.tenantId);
    expect(Object.entries(after).filter(([, n]) => n > 0)).toEqual([]);
    expect(await rowsOf(api, kept.tenantId)).toEqual(keptBefore);
    expect((await api.http.get('/v1/keys').set(doomed.auth)).status).toBe(401);
    expect(await deleteTenant(api.core.db, doomed.tenantId)).toBe(false);
  });
});
