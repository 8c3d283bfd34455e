import { describe, expect, it } from 'vitest';
import { engine, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { exportText, importText, sortedLines } from '../helpers/portability.js';

type Body = Record<string, unknown> & { id: string };

async function post(api: TestApi, t: Tenant, path: string, body: Record<string, unknown>): Promise<Body> {
  const res = await api.http.post(path).set(t.auth).send(body);
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Body;
}

/** A tenant with a subject, a session, private, anchored and session memories, supersession and canon. */
async function populate(api: TestApi, t: Tenant): Promise<void> {
  const agent = { agent_id: 'agent-1' };
  await post(api, t, '/v1/anchors', { anchor_external_id: 'alice', name: 'Alice' });
  await post(api, t, '/v1/memories', { ...agent, content: 'Alice lives in Paris', anchor_external_id: 'alice' });
  await post(api, t, '/v1/memories', { ...agent, content: 'Alice lives in Berlin', anchor_external_id: 'alice' });
  await post(api, t, '/v1/memories', { ...agent, content: 'Alice prefers email', anchor_external_id: 'alice' });
  await post(api, t, '/v1/memories', { ...agent, content: 'My own note: call the bank' });
  const s = await post(api, t, '/v1/sessions', { ...agent, anchor_external_id: 'alice' });
  await post(api, t, '/v1/memories', { ...agent, content: 'Asked about the March invoice', session_id: s.id });
  await post(api, t, '/v1/canon', { ...agent, content: 'Refunds take five business days' });
}

async function recall(api: TestApi, t: Tenant, query: string): Promise<string[]> {
  const res = await api.http
    .get('/v1/memories/recall')
    .set(t.auth)
    .query({ agent_id: 'agent-1', anchor_external_id: 'alice', query, limit: '20' });
  expect(res.status).toBe(200);
  return (res.body.results as { content: string }[]).map((r) => r.content).sort();
}

const counts = (file: string) => (JSON.parse(file.trimEnd().split('\n').at(-1) ?? '{}') as { counts: object }).counts;

describe(`a tenant's export imported into another tenant of the same server on ${engine}`, () => {
  it('imports whole beside the original, recalls the same, and a second import changes nothing', async () => {
    const api = await testApi();
    const source = await newTenant(api);
    await populate(api, source);
    const file = await exportText(api, source, '?audit=true');
    const copy = await newTenant(api);

    const res = await importText(api, copy, file);
    expect(res.status).toBe(200);
    const { canon, ...rest } = counts(file) as Record<string, number>;
    expect(res.body).toEqual({ lines: file.trimEnd().split('\n').length, imported: { ...rest, canon }, existing: 0 });
    expect(await recall(api, copy, 'where does alice live')).toEqual(
      await recall(api, source, 'where does alice live'),
    );

    const again = await importText(api, copy, file);
    expect(again.status).toBe(200);
    expect(again.body.imported).toEqual({ anchors: 0, sessions: 0, memories: 0, canon: 0, audit: 0 });
    // The original is untouched; the copy holds the same records under the same ids.
    expect(sortedLines(await exportText(api, source, '?audit=true'))).toEqual(sortedLines(file));
    const strip = (ls: string[]) => ls.filter((l) => !/^\{"type":"(audit|end)"/u.test(l));
    expect(strip(sortedLines(await exportText(api, copy)))).toEqual(strip(sortedLines(file)));
  });

  it("joins the file's subject to the tenant's own subject of that external id, whatever its id", async () => {
    const api = await testApi();
    const source = await newTenant(api);
    await populate(api, source);
    const file = await exportText(api, source, '?audit=true');
    const target = await newTenant(api);
    const own = await post(api, target, '/v1/anchors', { anchor_external_id: 'alice' });
    await post(api, target, '/v1/memories', {
      agent_id: 'agent-1',
      content: 'Alice has a dog',
      anchor_external_id: 'alice',
    });

    const res = await importText(api, target, file);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ imported: { anchors: 0 }, existing: 1 });
    const anchors = await api.http.get('/v1/anchors').set(target.auth);
    expect((anchors.body.anchors as { id: string }[]).map((a) => a.id)).toEqual([own.id]);
    expect(await recall(api, target, 'alice')).toEqual(
      expect.arrayContaining(['Alice has a dog', 'Alice lives in Berlin', 'Alice prefers email']),
    );
    // The subject's session and its memories came along to the tenant's subject.
    const subject = await api.http.get(`/v1/anchors/${own.id}/export`).set(target.auth);
    expect(subject.body.sessions).toHaveLength(1);
    expect((subject.body.memories as { content: string }[]).map((m) => m.content)).toContain(
      'Asked about the March invoice',
    );
    const again = await importText(api, target, file);
    expect(again.body.imported).toEqual({ anchors: 0, sessions: 0, memories: 0, canon: 0, audit: 0 });
  });
});
