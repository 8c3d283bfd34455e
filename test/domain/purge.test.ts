import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { engine, newTenant, testApi, type TestApi, type Tenant } from '../helpers/harness.js';
import { startSession } from '../helpers/store-recall.js';

async function post(api: TestApi, t: Tenant, path: string, body: Record<string, unknown>): Promise<string> {
  const res = await api.http.post(path).set(t.auth).send(body);
  if (res.status !== 201 && res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { id: string }).id;
}

/** Every row of every table of ours, as JSON text, with the table it came from. */
async function everyRow(api: TestApi): Promise<{ table: string; row: string }[]> {
  const tables = await sql<{ table_name: string }>`SELECT table_name FROM information_schema.tables
    WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`.execute(api.core.db);
  const rows: { table: string; row: string }[] = [];
  for (const { table_name } of tables.rows) {
    const result = await sql<{
      row: string;
    }>`SELECT row_to_json(t)::text AS row FROM ${sql.table(table_name)} t`.execute(api.core.db);
    rows.push(...result.rows.map((r) => ({ table: table_name, row: r.row })));
  }
  return rows;
}

async function memoriesOf(api: TestApi, anchorId: string): Promise<string[]> {
  const result = await sql<{ row: string }>`SELECT row_to_json(m)::text AS row FROM memories m
    WHERE anchor_id = ${anchorId} ORDER BY id`.execute(api.core.db);
  return result.rows.map((r) => r.row);
}

describe(`purge on ${engine}`, () => {
  it('erases a subject everywhere, leaving one counts-only event and other subjects untouched', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const marker = `marker-${randomUUID()}`;
    const external = `subject-${randomUUID()}`;
    const target = await post(api, t, '/v1/anchors', { anchor_external_id: external, name: `Name ${marker}` });
    const bystander = await post(api, t, '/v1/anchors', { anchor_external_id: `other-${randomUUID()}` });

    const s1 = await startSession(api, t.auth, { agent_id: 'a', anchor_id: target, metadata: { note: marker } });
    const s2 = await startSession(api, t.auth, { agent_id: 'a', anchor_id: target });
    await post(api, t, '/v1/memories', { agent_id: 'a', anchor_id: target, content: `Lives in Paris ${marker}` });
    await post(api, t, '/v1/memories', { agent_id: 'a', anchor_id: target, content: `Lives in Berlin ${marker}` });
    await post(api, t, '/v1/memories', { agent_id: 'a', session_id: s1, content: `In a hurry ${marker}` });
    await post(api, t, '/v1/memories', { agent_id: 'a', session_id: s2, content: `Wants a call back ${marker}` });
    await post(api, t, '/v1/memories', {
      agent_id: 'a',
      anchor_id: target,
      session_id: s2,
      content: `Prefers email ${marker}`,
      metadata: { tag: marker },
    });
    await api.http.post(`/v1/sessions/${s1}/end`).set(t.auth).send({});
    await post(api, t, '/v1/memories', { agent_id: 'a', anchor_id: bystander, content: 'Lives in Rome' });
    await post(api, t, '/v1/memories', { agent_id: 'a', anchor_id: bystander, content: 'Likes opera' });
    const bystanderBefore = await memoriesOf(api, bystander);

    const refused = await api.http.delete(`/v1/anchors/${target}`).set(t.auth);
    expect(refused.status).toBe(400);
    const purged = await api.http.delete(`/v1/anchors/${target}`).set(t.auth).query({ purge: 'true' });
    expect(purged.status).toBe(200);
    expect(purged.body).toEqual({ purged: true, anchor_id: target, deleted: { memories: 5, sessions: 2 } });

    const traces = (await everyRow(api)).filter(
      (r) => r.row.includes(target) || r.row.includes(external) || r.row.includes(marker) || r.row.includes(s1),
    );
    expect(traces).toHaveLength(1);
    const event = JSON.parse(traces[0]?.row ?? '{}') as Record<string, unknown>;
    expect(traces[0]?.table).toBe('audit_events');
    expect(event).toMatchObject({ action: 'anchor_purged', anchor_id: target, memory_id: null, session_id: null });
    expect(event.changes).toEqual({ memories: 5, sessions: 2 });

    expect(await memoriesOf(api, bystander)).toEqual(bystanderBefore);
    expect((await api.http.get(`/v1/anchors/${target}`).set(t.auth)).status).toBe(404);
    expect((await api.http.get(`/v1/sessions/${s2}`).set(t.auth)).status).toBe(404);
    expect((await api.http.delete(`/v1/anchors/${target}`).set(t.auth).query({ purge: 'true' })).status).toBe(404);
  });

  it('needs the admin scope', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const anchor = await post(api, t, '/v1/anchors', { anchor_external_id: 'x' });
    const key = await api.http
      .post('/v1/keys')
      .set(t.auth)
      .send({ name: 'rw', scopes: ['read', 'write'] });
    const res = await api.http
      .delete(`/v1/anchors/${anchor}`)
      .set({ Authorization: `Bearer ${(key.body as { api_key: string }).api_key}` })
      .query({ purge: 'true' });
    expect(res.status).toBe(403);
  });
});
