import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../src/domain/records/audit.js';
import { engine, manualClock, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { startSession, storeMemory, writeCanon } from '../helpers/store-recall.js';

const MINUTE = 60_000;

async function auditPage(api: TestApi, t: Tenant, query: Record<string, string | number> = {}) {
  const res = await api.http
    .get('/v1/audit')
    .set(t.auth)
    .query({ limit: 200, ...query });
  expect(res.status).toBe(200);
  return res.body as { events: AuditEvent[]; next_cursor: string | null };
}

/**
 * One of every mutation that exists so far, one minute apart, by a write key and the admin key.
 * Every content carries a marker that must never reach the audit trail.
 */
async function scenario() {
  const clock = manualClock();
  const api = await testApi({ clock });
  const t = await newTenant(api);
  const step = () => clock.advance(MINUTE);
  const marker = `MARKER-${randomUUID()}`;
  const setupKeyId = ((await api.http.get('/v1/keys').set(t.auth)).body.keys[0] as { id: string }).id;
  step();
  const created = await api.http
    .post('/v1/keys')
    .set(t.auth)
    .send({ name: 'writer', scopes: ['read', 'write'] });
  const writer = { id: created.body.id as string, key: created.body.api_key as string };
  const w = { Authorization: `Bearer ${writer.key}` };
  step();
  const privateId = await storeMemory(api, w, {
    agent_id: 'agent-1',
    content: `My private note ${marker}`,
    metadata: { note: marker },
  });
  step();
  const anchoredRes = await api.http
    .post('/v1/memories')
    .set(w)
    .send({ agent_id: 'agent-2', content: `Subject fact ${marker}`, anchor_external_id: 'subj' });
  const anchoredId = anchoredRes.body.id as string;
  const anchorId = anchoredRes.body.anchor_id as string;
  step();
  const sessionId = await startSession(api, w, { agent_id: 'agent-3', anchor_id: anchorId });
  const sessionMemoryId = await storeMemory(api, w, {
    agent_id: 'agent-3',
    content: `Session remark ${marker}`,
    session_id: sessionId,
  });
  step();
  expect((await api.http.post(`/v1/sessions/${sessionId}/end`).set(w).send({})).status).toBe(200);
  step();
  expect((await api.http.delete(`/v1/memories/${privateId}`).set(w)).status).toBe(204);
  step();
  const canonId = await writeCanon(api, t.auth, `Canon rule ${marker}`, 'policy-bot');
  step();
  expect((await api.http.delete(`/v1/canon/${canonId}`).set(t.auth)).status).toBe(204);
  step();
  expect((await api.http.delete(`/v1/keys/${writer.id}`).set(t.auth)).status).toBe(204);
  const ids = { setupKeyId, writerId: writer.id, privateId, anchoredId, anchorId, sessionId, sessionMemoryId, canonId };
  return { api, t, marker, writerKey: writer.key, ids };
}

describe(`audit trail on ${engine}`, () => {
  it('records every mutation with its actor, oldest first', async () => {
    const { api, t, ids } = await scenario();
    const { events, next_cursor } = await auditPage(api, t);
    expect(next_cursor).toBeNull();
    const at = (minutes: number) => new Date(Date.parse('2026-01-01T00:00:00Z') + minutes * MINUTE).toISOString();
    const admin = (agent: string | null = null) => ({ key_id: ids.setupKeyId, agent_id: agent });
    const writer = (agent: string) => ({ key_id: ids.writerId, agent_id: agent });
    const none = { memory_id: null, anchor_id: null, session_id: null };
    expect(events.map(({ id: _id, changes: _changes, ...rest }) => rest)).toEqual([
      { at: at(0), action: 'key_created', ...none, actor: admin() },
      { at: at(1), action: 'key_created', ...none, actor: admin() },
      { at: at(2), action: 'created', ...none, memory_id: ids.privateId, actor: writer('agent-1') },
      {
        at: at(3),
        action: 'created',
        ...none,
        memory_id: ids.anchoredId,
        anchor_id: ids.anchorId,
        actor: writer('agent-2'),
      },
      {
        at: at(4),
        action: 'created',
        memory_id: ids.sessionMemoryId,
        anchor_id: ids.anchorId,
        session_id: ids.sessionId,
        actor: writer('agent-3'),
      },
      {
        at: at(5),
        action: 'session_ended',
        ...none,
        anchor_id: ids.anchorId,
        session_id: ids.sessionId,
        actor: writer('agent-3'),
      },
      { at: at(6), action: 'deleted', ...none, memory_id: ids.privateId, actor: writer('agent-1') },
      { at: at(7), action: 'canon_written', ...none, memory_id: ids.canonId, actor: admin('policy-bot') },
      { at: at(8), action: 'canon_deleted', ...none, memory_id: ids.canonId, actor: admin('policy-bot') },
      { at: at(9), action: 'key_revoked', ...none, actor: admin() },
    ]);
    expect(events.map((e) => e.changes)).toEqual([
      { key_id: ids.setupKeyId, scopes: ['read', 'write', 'admin'] },
      { key_id: ids.writerId, scopes: ['read', 'write'] },
      { binding: 'private', confidence: 0.7 },
      { binding: 'anchored', confidence: 0.7 },
      { binding: 'session', confidence: 0.7 },
      {},
      { binding: 'private' },
      { binding: 'canon', confidence: 1 },
      { binding: 'canon' },
      { key_id: ids.writerId },
    ]);
    // A deleted memory keeps its trail.
    const history = await api.http.get(`/v1/memories/${ids.privateId}/history`).set(t.auth);
    expect(history.body.events.map((e: AuditEvent) => e.action)).toEqual(['created', 'deleted']);
  });

  it('is for admin keys only', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    for (const scopes of [['read'], ['write'], ['read', 'write']]) {
      const res = await api.http.post('/v1/keys').set(t.auth).send({ name: 'k', scopes });
      const denied = await api.http.get('/v1/audit').set({ Authorization: `Bearer ${res.body.api_key}` });
      expect({ scopes, status: denied.status, code: denied.body.code }).toEqual({
        scopes,
        status: 403,
        code: 'insufficient_scope',
      });
    }
  });

  it('filters by anchor_id, memory_id, action and since', async () => {
    const { api, t, ids } = await scenario();
    const actions = async (query: Record<string, string>) =>
      (await auditPage(api, t, query)).events.map((e) => e.action);
    expect(await actions({ anchor_id: ids.anchorId })).toEqual(['created', 'created', 'session_ended']);
    expect(await actions({ memory_id: ids.privateId })).toEqual(['created', 'deleted']);
    expect(await actions({ memory_id: ids.canonId })).toEqual(['canon_written', 'canon_deleted']);
    const created = (await auditPage(api, t, { action: 'created' })).events;
    expect(created.map((e) => e.memory_id)).toEqual([ids.privateId, ids.anchoredId, ids.sessionMemoryId]);
    expect(await actions({ action: 'key_revoked' })).toEqual(['key_revoked']);
    // since is inclusive: the event at exactly that time is in.
    expect(await actions({ since: '2026-01-01T00:07:00Z' })).toEqual(['canon_written', 'canon_deleted', 'key_revoked']);
    expect(await actions({ since: '2026-01-01T00:07:00.001Z' })).toEqual(['canon_deleted', 'key_revoked']);
    expect(await actions({ since: '2026-01-01T01:00:00+01:00', action: 'created' })).toEqual([
      'created',
      'created',
      'created',
    ]);
    expect(await actions({ anchor_id: ids.anchorId, action: 'session_ended' })).toEqual(['session_ended']);
    expect(await actions({ anchor_id: randomUUID() })).toEqual([]);
  });

  it('pages with a cursor: disjoint pages, in order, nothing lost', async () => {
    const { api, t } = await scenario();
    const all = (await auditPage(api, t)).events;
    for (const [limit, filter] of [
      [3, {}],
      [1, { action: 'created' }],
    ] as const) {
      const seen: AuditEvent[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await auditPage(api, t, { ...filter, limit, ...(cursor ? { cursor } : {}) });
        expect(page.events.length).toBeLessThanOrEqual(limit);
        seen.push(...page.events);
        cursor = page.next_cursor;
        pages++;
      } while (cursor && pages < 50);
      const expected = all.filter((e) => !('action' in filter) || e.action === filter.action);
      expect(seen.map((e) => e.id)).toEqual(expected.map((e) => e.id));
      expect(pages).toBe(Math.ceil(expected.length / limit));
    }
    const bad = await api.http.get('/v1/audit').set(t.auth).query({ cursor: 'not-a-cursor' });
    expect([bad.status, bad.body.code]).toEqual([400, 'invalid_request']);
  });

  it('never holds memory content or key plaintext, in the API or in the table', async () => {
    const { api, t, marker, writerKey, ids } = await scenario();
    const secrets = [marker, t.adminKey, writerKey, t.adminKey.slice(12), writerKey.slice(12)];
    // The marker really is stored (so not finding it below means something).
    const stored = await sql<{ row: string }>`SELECT m::text AS row FROM memories m
      WHERE m.tenant_id = ${t.tenantId} AND m.id = ${ids.anchoredId}`.execute(api.core.db);
    expect(stored.rows[0]?.row).toContain(marker);

    const api1 = JSON.stringify(await auditPage(api, t));
    const histories = await Promise.all(
      [ids.privateId, ids.anchoredId, ids.sessionMemoryId, ids.canonId].map(
        async (id) => (await api.http.get(`/v1/memories/${id}/history`).set(t.auth)).text,
      ),
    );
    const raw = await sql<{ row: string }>`SELECT a::text AS row FROM audit_events a
      WHERE a.tenant_id = ${t.tenantId}`.execute(api.core.db);
    expect(raw.rows).toHaveLength(10);
    for (const text of [api1, ...histories, ...raw.rows.map((r) => r.row)]) {
      for (const secret of secrets) expect(text.includes(secret)).toBe(false);
    }
  });
});
