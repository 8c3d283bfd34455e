import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { engine, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { expectProblem } from '../helpers/problem.js';
import { memoryRecord } from '../helpers/portability.js';

const HEADER = JSON.stringify({ type: 'header', format: 'agent-memory-export', version: 1, embedder: 'any' });
const AT = '2026-01-02T03:04:05.678Z';

const memory = (content: string, extra: Record<string, unknown> = {}) =>
  memoryRecord(content, { agent_id: 'agent-a', ...extra });

const audit = (extra: Record<string, unknown> = {}) => ({
  type: 'audit',
  id: randomUUID(),
  at: AT,
  action: 'deleted',
  memory_id: null,
  anchor_id: null,
  session_id: null,
  actor: { key_id: null, agent_id: 'agent-a' },
  changes: { binding: 'private' },
  ...extra,
});

const ndjson = (...records: object[]): string => [HEADER, ...records.map((r) => JSON.stringify(r))].join('\n') + '\n';

interface Setting {
  api: TestApi;
  t: Tenant;
  /** An admin key bound to agent-a. */
  boundA: { id: string; auth: { Authorization: string } };
  /** agent-b's private memory, and the id of the key that stored it. */
  secret: { id: string; keyId: string };
}

async function setting(): Promise<Setting> {
  const api = await testApi();
  const t = await newTenant(api);
  const key = await api.http
    .post('/v1/keys')
    .set(t.auth)
    .send({ name: 'agent-a admin', scopes: ['read', 'write', 'admin'], agent_ids: ['agent-a'] });
  expect(key.status).toBe(201);
  const keyB = await api.http
    .post('/v1/keys')
    .set(t.auth)
    .send({ name: 'agent-b', scopes: ['read', 'write'], agent_ids: ['agent-b'] });
  const stored = await api.http
    .post('/v1/memories')
    .set({ Authorization: `Bearer ${keyB.body.api_key as string}` })
    .send({ agent_id: 'agent-b', content: 'The vault code is 4711' });
  expect(stored.status).toBe(201);
  return {
    api,
    t,
    boundA: { id: key.body.id as string, auth: { Authorization: `Bearer ${key.body.api_key as string}` } },
    secret: { id: stored.body.id as string, keyId: keyB.body.id as string },
  };
}

const importAs = (s: Setting, body: string) =>
  s.api.http.post('/v1/import').set(s.boundA.auth).set('Content-Type', 'application/x-ndjson').send(body);

const history = async (s: Setting, id: string): Promise<{ action: string }[]> => {
  const res = await s.api.http.get(`/v1/memories/${id}/history`).set(s.t.auth);
  expect(res.status).toBe(200);
  return res.body.events as { action: string }[];
};

describe(`import with a key bound to agents on ${engine}`, () => {
  it('refuses audit events of another agent, or naming another key, or naming no one (403 at their line)', async () => {
    const s = await setting();
    const forged = [
      { key_id: s.secret.keyId, agent_id: 'agent-b' },
      { key_id: null, agent_id: 'agent-b' },
      { key_id: s.secret.keyId, agent_id: 'agent-a' },
      { key_id: null, agent_id: null },
    ];
    for (const actor of forged) {
      const res = await importAs(s, ndjson(memory('kept before it'), audit({ memory_id: s.secret.id, actor })));
      expectProblem(res, 403, 'insufficient_scope');
      expect(res.body.detail).toMatch(/^line 3: /);
    }
    expect((await history(s, s.secret.id)).map((e) => e.action)).toEqual(['created']);

    // Its own agent's event, or its own key's, is taken; one naming agent-b's memory does not reach
    // that memory's history.
    const own = await importAs(
      s,
      ndjson(
        audit({ memory_id: s.secret.id }),
        audit({ action: 'key_created', actor: { key_id: s.boundA.id, agent_id: null }, changes: {} }),
      ),
    );
    expect(own.status).toBe(200);
    expect(own.body.imported.audit).toBe(2);
    expect((await history(s, s.secret.id)).map((e) => e.action)).toEqual(['created']);
  });

  it("answers a record with another agent's private memory id exactly as one with an unknown id", async () => {
    const s = await setting();
    const taken = memory('A note of agent-a', { id: s.secret.id });
    const fresh = memory('Another note of agent-a');
    const answers = [];
    for (const record of [taken, fresh]) {
      const first = await importAs(s, ndjson(record));
      const again = await importAs(s, ndjson(record));
      answers.push([first.status, first.body, again.status, again.body]);
      // Neither id answers for the bound key afterwards: both were imported under ids of its own.
      expectProblem(await s.api.http.get(`/v1/memories/${record.id}`).set(s.boundA.auth), 404, 'not_found');
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]).toEqual([
      200,
      { lines: 2, imported: { anchors: 0, sessions: 0, memories: 1, canon: 0, audit: 0 }, existing: 0 },
      200,
      { lines: 2, imported: { anchors: 0, sessions: 0, memories: 0, canon: 0, audit: 0 }, existing: 1 },
    ]);
    // agent-b's memory is as it was, and agent-a recalls its own note.
    const secret = await s.api.http.get(`/v1/memories/${s.secret.id}`).set(s.t.auth);
    expect(secret.body).toMatchObject({ agent_id: 'agent-b', content: 'The vault code is 4711' });
    const recall = await s.api.http
      .get('/v1/memories/recall')
      .set(s.boundA.auth)
      .query({ agent_id: 'agent-a', query: 'note of agent-a' });
    expect((recall.body.results as { content: string }[]).map((r) => r.content).sort()).toEqual([
      'A note of agent-a',
      'Another note of agent-a',
    ]);
  });

  it('follows a renamed id in every reference of the file, and keeps the ids of memories the key sees', async () => {
    const s = await setting();
    const own = await s.api.http.post('/v1/memories').set(s.boundA.auth).send({ agent_id: 'agent-a', content: 'Mine' });
    const newer = memory('Lives in Rome', { id: s.secret.id });
    const older = memory('Lives in Paris', { status: 'superseded', superseded_by: newer.id });
    const event = audit({ action: 'superseded', memory_id: older.id, changes: { superseded_by: newer.id } });
    const file = ndjson(older, newer, event, memory('Mine', { id: own.body.id }));
    const res = await importAs(s, file);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ imported: { memories: 2, audit: 1 }, existing: 1 });

    const rows = await s.api.core.db
      .selectFrom('memories')
      .select(['id', 'content', 'superseded_by'])
      .where('tenant_id', '=', s.t.tenantId)
      .where('agent_id', '=', 'agent-a')
      .execute();
    const byContent = new Map(rows.map((r) => [r.content, r]));
    const rome = byContent.get('Lives in Rome');
    const paris = byContent.get('Lives in Paris');
    expect(rome?.id).not.toBe(s.secret.id);
    expect(paris?.superseded_by).toBe(rome?.id);
    expect(byContent.get('Mine')?.id).toBe(own.body.id);
    const events = await s.api.http.get(`/v1/memories/${paris?.id ?? ''}/history`).set(s.boundA.auth);
    expect(events.body.events).toEqual([expect.objectContaining({ action: 'superseded', memory_id: paris?.id })]);

    const again = await importAs(s, file);
    expect(again.body).toMatchObject({ imported: { memories: 0, audit: 0 }, existing: 4 });
  });
});
