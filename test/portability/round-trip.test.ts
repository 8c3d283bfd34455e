import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engine, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { freshDatabase } from '../helpers/isolated-db.js';
import { exportText, importText, sortedLines } from '../helpers/portability.js';

type Body = Record<string, unknown> & { id: string };

async function post(api: TestApi, t: Tenant, path: string, body: Record<string, unknown>): Promise<Body> {
  const res = await api.http.post(path).set(t.auth).send(body);
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Body;
}

/** A tenant with every binding, sessions (one ended), canon, reinforced, superseded and re-mentioned memories. */
async function populate(api: TestApi, t: Tenant) {
  const agent = { agent_id: 'agent-1' };
  await post(api, t, '/v1/anchors', { anchor_external_id: 'alice', name: 'Alice', metadata: { tier: 'gold' } });
  await post(api, t, '/v1/memories', { ...agent, content: 'Alice prefers email', anchor_external_id: 'alice' });
  await post(api, t, '/v1/memories', { ...agent, content: 'Alice prefers email', anchor_external_id: 'alice' });
  const paris = await post(api, t, '/v1/memories', {
    ...agent,
    content: 'Lives in Paris',
    anchor_external_id: 'alice',
  });
  await post(api, t, '/v1/memories', { ...agent, content: 'Lives in Berlin', anchor_external_id: 'alice' });
  await post(api, t, '/v1/memories', { ...agent, content: 'My own note: call the bank', metadata: { n: 1 } });
  const s1 = await post(api, t, '/v1/sessions', {
    ...agent,
    anchor_external_id: 'alice',
    metadata: { channel: 'chat' },
  });
  await post(api, t, '/v1/memories', { ...agent, content: 'Asked about the March invoice', session_id: s1.id });
  const s2 = await post(api, t, '/v1/sessions', { ...agent, anchor_external_id: 'alice' });
  // The same fact again in a later session of the subject: recorded as a mention of the first.
  await post(api, t, '/v1/memories', { ...agent, content: 'Asked about the March invoice', session_id: s2.id });
  await post(api, t, `/v1/sessions/${s1.id}/end`, {});
  const loose = await post(api, t, '/v1/sessions', { agent_id: 'agent-2' });
  await post(api, t, '/v1/memories', { agent_id: 'agent-2', content: 'Prefers short answers', session_id: loose.id });
  await post(api, t, '/v1/canon', {
    ...agent,
    content: 'Refunds take five business days',
    metadata: { src: 'policy' },
  });
  return { paris };
}

describe(`export and import round trip on ${engine}`, () => {
  let target: Awaited<ReturnType<typeof freshDatabase>>;
  beforeAll(async () => {
    target = await freshDatabase();
  });
  afterAll(async () => {
    await target.close();
  });

  it('re-exports byte-identical NDJSON (sorted) from a fresh database, and a second import changes nothing', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const { paris } = await populate(api, t);
    const first = await exportText(api, t, '?audit=true');
    const lines = sortedLines(first);
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const types = records.map((r) => r.type);
    expect(types.filter((x) => x === 'anchor')).toHaveLength(1);
    expect(types.filter((x) => x === 'session')).toHaveLength(3);
    expect(types.filter((x) => x === 'canon')).toHaveLength(1);
    expect(new Set(records.filter((r) => r.type === 'memory').map((r) => r.binding))).toEqual(
      new Set(['anchored', 'private', 'session']),
    );
    expect(records.find((r) => r.id === paris.id)).toMatchObject({
      status: 'superseded',
      superseded_by: expect.any(String),
    });
    expect(records.some((r) => r.type === 'memory' && (r.reinforcement_count as number) > 0)).toBe(true);
    expect(records.some((r) => r.type === 'memory' && (r.mentioned_in_sessions as string[]).length === 1)).toBe(true);
    expect(records.some((r) => r.type === 'session' && r.status === 'ended')).toBe(true);
    expect(first.trimEnd().split('\n').at(-1)).toMatch(/^\{"type":"end","counts":/);
    // Keys are never exported: neither their hashes nor the key itself.
    expect(first).not.toContain(t.adminKey);
    expect(first).not.toContain('key_hash');

    const u = await newTenant(target.api);
    const imported = await importText(target.api, u, first);
    expect(imported.status).toBe(200);
    expect(imported.body).toMatchObject({
      imported: { anchors: 1, sessions: 3, canon: 1 },
      existing: 0,
    });
    const second = await exportText(target.api, u, '?audit=true');
    const without = (ls: string[]) =>
      ls.filter((l) => !l.startsWith('{"type":"audit"') && !l.startsWith('{"type":"end"'));
    expect(without(sortedLines(second))).toEqual(without(lines));
    // The target's audit trail holds the source's, besides its own setup's key_created.
    const targetLines = new Set(sortedLines(second));
    for (const l of lines.filter((x) => x.startsWith('{"type":"audit"'))) expect(targetLines.has(l)).toBe(true);

    const again = await importText(target.api, u, first);
    expect(again.status).toBe(200);
    expect(again.body.imported).toEqual({ anchors: 0, sessions: 0, memories: 0, canon: 0, audit: 0 });
    expect(sortedLines(await exportText(target.api, u, '?audit=true'))).toEqual(sortedLines(second));

    // Recall works on the imported memories: their vectors were computed on import.
    const recall = await target.api.http
      .get('/v1/memories/recall')
      .set(u.auth)
      .query({ agent_id: 'agent-1', anchor_external_id: 'alice', query: 'where does alice live' });
    expect(recall.status).toBe(200);
    expect((recall.body.results as { content: string }[]).map((r) => r.content)).toContain('Lives in Berlin');
  });
});
