import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { engine, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { importText } from '../helpers/portability.js';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

interface Hit {
  content: string;
  binding: string;
  anchor_external_id: string | null;
  session_id: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
}

async function recall(api: TestApi, t: Tenant, query: Record<string, string>): Promise<Hit[]> {
  const res = await api.http
    .get('/v1/memories/recall')
    .set(t.auth)
    .query({ limit: '20', ...query });
  expect(res.status).toBe(200);
  return res.body.results as Hit[];
}

describe(`mem0 import on ${engine}`, () => {
  it('maps user_id to subjects, agent_id to agents and run_id to sessions, and recall finds each fact there', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const res = await importText(api, t, fixture('mem0-export.json'), '?format=mem0', 'application/json');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ lines: 5, imported: { anchors: 2, sessions: 1, memories: 5 } });

    const alice = await recall(api, t, {
      agent_id: 'travel-assistant',
      anchor_external_id: 'alice',
      query: 'trip to Japan',
    });
    const japan = alice.find((h) => h.content === 'Is planning a trip to Japan next month');
    expect(japan).toMatchObject({
      binding: 'anchored',
      anchor_external_id: 'alice',
      created_at: '2024-07-20T08:30:36.275Z',
      metadata: { source: 'mem0', mem0_id: '892db2ae-06d9-49e5-8b3e-585ef9b85b8e', categories: ['travel'] },
    });
    expect(alice.map((h) => h.content)).toContain('Is allergic to peanuts');
    // bob's fact is bob's only.
    expect(alice.map((h) => h.content)).not.toContain('Loves hiking in the Alps');
    const bob = await recall(api, t, { agent_id: 'import', anchor_external_id: 'bob', query: 'hiking' });
    expect(bob.map((h) => h.content)).toContain('Loves hiking in the Alps');

    // run_id: a session of alice, kept active so that its memories do not expire.
    const sessions = await api.http.get('/v1/anchors').set(t.auth).query({ anchor_external_id: 'alice' });
    const aliceId = (sessions.body.anchors as { id: string }[])[0]?.id ?? '';
    const dump = await api.http.get(`/v1/anchors/${aliceId}/export`).set(t.auth);
    expect(dump.status).toBe(200);
    const run = (dump.body.sessions as { id: string; status: string; metadata: Record<string, unknown> }[])[0];
    expect(run).toMatchObject({ status: 'active', metadata: { mem0_run_id: 'trip-planning-2024-07-23' } });
    const inRun = await recall(api, t, {
      agent_id: 'travel-assistant',
      session_id: run?.id ?? '',
      query: 'window seat',
    });
    expect(inRun.find((h) => h.content.startsWith('Wants a window seat'))).toMatchObject({ binding: 'session' });

    // agent_id alone: that agent's private memory, which no other agent recalls.
    const mine = await recall(api, t, { agent_id: 'travel-assistant', query: 'British English' });
    expect(mine.find((h) => h.content.startsWith('Answers in British'))).toMatchObject({ binding: 'private' });
    const other = await recall(api, t, { agent_id: 'someone-else', query: 'British English' });
    expect(other.map((h) => h.content)).not.toContain('Answers in British English spelling');

    // Idempotent: the same file again changes nothing.
    const again = await importText(api, t, fixture('mem0-export.json'), '?format=mem0', 'application/json');
    expect(again.body.imported).toEqual({ anchors: 0, sessions: 0, memories: 0, canon: 0, audit: 0 });
  });

  it('takes one memory a line too, and files the facts under a subject the tenant already has', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const existing = await api.http.post('/v1/anchors').set(t.auth).send({ anchor_external_id: 'alice' });
    const doc = JSON.parse(fixture('mem0-export.json')) as { results: unknown[] };
    const ndjson = doc.results.map((r) => JSON.stringify(r)).join('\n');
    const res = await importText(api, t, ndjson, '?format=mem0&agent_id=mem0-agent');
    expect(res.status).toBe(200);
    expect(res.body.imported).toMatchObject({ anchors: 1, memories: 5 });
    const profile = await api.http.get(`/v1/anchors/${existing.body.id as string}/memories`).set(t.auth);
    expect((profile.body.memories as Hit[]).map((m) => m.content)).toContain('Is planning a trip to Japan next month');
  });
});

describe(`MCP memory server import on ${engine}`, () => {
  it('makes entities subjects, observations their memories, and relations facts of their source', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const res = await importText(api, t, fixture('mcp-memory.jsonl'), '?format=mcp-memory&agent_id=claude');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ lines: 5, imported: { anchors: 3, memories: 6 } });

    const john = await recall(api, t, { agent_id: 'claude', anchor_external_id: 'John_Smith', query: 'Spanish' });
    expect(john.find((h) => h.content === 'Speaks fluent Spanish')).toMatchObject({
      binding: 'anchored',
      anchor_external_id: 'John_Smith',
    });
    const work = await recall(api, t, {
      agent_id: 'claude',
      anchor_external_id: 'John_Smith',
      query: 'where does John work',
    });
    expect(work.find((h) => h.content === 'John_Smith works at Anthropic')).toMatchObject({
      metadata: { source: 'mcp-memory', relation: { from: 'John_Smith', to: 'Anthropic', relationType: 'works_at' } },
    });
    const org = await recall(api, t, { agent_id: 'claude', anchor_external_id: 'Anthropic', query: 'Claude models' });
    expect(org.map((h) => h.content)).toEqual(['Builds the Claude models']);

    const again = await importText(api, t, fixture('mcp-memory.jsonl'), '?format=mcp-memory&agent_id=claude');
    expect(again.body.imported).toEqual({ anchors: 0, sessions: 0, memories: 0, canon: 0, audit: 0 });
  });
});
