import { sql } from 'kysely';
import { describe, expect, it, onTestFinished } from 'vitest';
import { sweepExpiredSessions } from '../../src/domain/lifecycle/sweeper.js';
import { engine, manualClock, newTenant, type Tenant, type TestApi } from '../helpers/harness.js';
import { sweepingApi } from '../helpers/isolated-db.js';
import { createAnchor, startSession, storeMemory, writeCanon } from '../helpers/store-recall.js';

/**
 * The BM25 statistics kept by the triggers of migration 0006 must equal the statistics recomputed
 * from the memories themselves, whatever path changed them.
 */
async function kept(api: TestApi, tenantId: string) {
  const units = await sql<{ unit: string; docs: number; total_len: number }>`
    SELECT unit, docs::int AS docs, total_len::int AS total_len FROM memory_unit_stats
    WHERE tenant_id = ${tenantId} ORDER BY unit`.execute(api.core.db);
  const terms = await sql<{ unit: string; lexeme: string; df: number }>`
    SELECT unit, lexeme, df::int AS df FROM memory_term_stats
    WHERE tenant_id = ${tenantId} ORDER BY unit, lexeme`.execute(api.core.db);
  return { units: units.rows, terms: terms.rows };
}

async function recomputed(api: TestApi, tenantId: string) {
  const unit = sql`memory_stats_unit(m.binding, m.agent_id, m.anchor_id, m.session_id)`;
  const units = await sql<{ unit: string; docs: number; total_len: number }>`
    SELECT ${unit} AS unit, count(*)::int AS docs, sum(length(m.search))::int AS total_len
    FROM memories AS m WHERE m.tenant_id = ${tenantId} AND m.status = 'active'
    GROUP BY 1 ORDER BY 1`.execute(api.core.db);
  const terms = await sql<{ unit: string; lexeme: string; df: number }>`
    SELECT ${unit} AS unit, l.lexeme, count(*)::int AS df
    FROM memories AS m CROSS JOIN LATERAL unnest(tsvector_to_array(m.search)) AS l(lexeme)
    WHERE m.tenant_id = ${tenantId} AND m.status = 'active'
    GROUP BY 1, 2 ORDER BY 1, 2`.execute(api.core.db);
  return { units: units.rows, terms: terms.rows };
}

async function expectConsistent(api: TestApi, t: Tenant, step: string): Promise<void> {
  const [have, want] = [await kept(api, t.tenantId), await recomputed(api, t.tenantId)];
  expect({ step, ...have }).toEqual({ step, ...want });
}

describe(`maintained BM25 statistics on ${engine}`, () => {
  it('equal the statistics recomputed from scratch after stores, reinforcements, supersessions, deletes, purges and sweeps', async () => {
    const clock = manualClock();
    const { api, close } = await sweepingApi({ clock });
    onTestFinished(close);
    const t = await newTenant(api);
    const store = (body: Record<string, unknown>) => storeMemory(api, t.auth, { agent_id: 'agent-1', ...body });

    await store({ content: 'Prefers tea over coffee in the morning' });
    await store({ content: 'Speaks French and German', agent_id: 'agent-2' });
    const paris = await store({ content: 'Lives in Paris', anchor_external_id: 'c1' });
    // A reinforcement: the same memory again, its row updated but not its statistics.
    await storeMemory(api, t.auth, { agent_id: 'agent-1', content: 'lives in paris', anchor_external_id: 'c1' }).catch(
      () => undefined,
    );
    const canon = await writeCanon(api, t.auth, 'Refunds are allowed within thirty days of purchase');
    await writeCanon(api, t.auth, 'Never share a customer address by email');
    await expectConsistent(api, t, 'stores');
    expect((await kept(api, t.tenantId)).units.length).toBe(4);

    // A supersession takes Paris out of the active memories.
    await store({ content: 'Lives in Berlin', anchor_external_id: 'c1' });
    const row = await api.core.db.selectFrom('memories').select('status').where('id', '=', paris).executeTakeFirst();
    expect(row?.status).toBe('superseded');
    await expectConsistent(api, t, 'supersession');

    // Promotion moves a session memory to its subject's anchored memories.
    const session = await startSession(api, t.auth, { agent_id: 'agent-1', anchor_external_id: 'c1' });
    await store({ content: 'Is in a hurry today', session_id: session });
    for (let i = 0; i < 4; i++)
      await storeMemory(api, t.auth, { agent_id: 'agent-1', content: 'Is a vegetarian', session_id: session }).catch(
        () => undefined,
      );
    await expectConsistent(api, t, 'promotion');

    const doomed = await store({ content: 'Owns a red bicycle and a blue car' });
    expect((await api.http.delete(`/v1/memories/${doomed}`).set(t.auth)).status).toBe(204);
    expect((await api.http.delete(`/v1/canon/${canon}`).set(t.auth)).status).toBe(204);
    await expectConsistent(api, t, 'deletes');

    const target = await createAnchor(api, t.auth, 'purged-subject');
    await store({ content: 'Collects vintage stamps', anchor_id: target });
    await store({ content: 'Collects rare coins', anchor_id: target });
    const purged = await api.http.delete(`/v1/anchors/${target}`).set(t.auth).query({ purge: 'true' });
    expect(purged.status).toBe(200);
    await expectConsistent(api, t, 'purge');

    const ended = await api.http.post(`/v1/sessions/${session}/end`).set(t.auth).send({});
    expect(ended.status).toBe(200);
    clock.advance(30 * 24 * 3_600_000);
    await sweepExpiredSessions(api.core);
    await expectConsistent(api, t, 'sweep');

    // Nothing left behind at zero.
    const zero = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM memory_term_stats WHERE tenant_id = ${t.tenantId} AND df <= 0`.execute(
      api.core.db,
    );
    expect(zero.rows[0]?.n).toBe(0);
  });
});
