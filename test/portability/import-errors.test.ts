import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { engine, newKey, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { expectProblem } from '../helpers/problem.js';
import { exportText, importText, sortedLines } from '../helpers/portability.js';

const HEADER = JSON.stringify({ type: 'header', format: 'agent-memory-export', version: 1, embedder: 'any' });
const AT = '2026-01-02T03:04:05.678Z';

const anchor = (externalId: string, id: string = randomUUID()) => ({
  type: 'anchor',
  id,
  anchor_external_id: externalId,
  name: null,
  metadata: {},
  created_at: AT,
});

const memory = (content: string, extra: Record<string, unknown> = {}) => ({
  type: 'memory',
  id: randomUUID(),
  agent_id: 'agent-1',
  content,
  binding: 'private',
  anchor_id: null,
  session_id: null,
  status: 'active',
  confidence: 0.7,
  decay_rate: 0.05,
  reinforcement_count: 0,
  superseded_by: null,
  metadata: {},
  created_at: AT,
  updated_at: AT,
  last_reinforced_at: AT,
  mentioned_in_sessions: [],
  ...extra,
});

const ndjson = (...lines: (object | string)[]): string =>
  lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n';

const contents = async (api: TestApi, t: Tenant): Promise<string[]> =>
  sortedLines(await exportText(api, t))
    .map((l) => JSON.parse(l) as { type: string; content?: string })
    .filter((r) => r.type === 'memory')
    .map((r) => r.content ?? '')
    .sort();

describe(`POST /v1/import refusals on ${engine}`, () => {
  it('reports a bad line by number, keeps the lines before it, writes nothing of it or after it', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const good = [memory('first fact'), memory('second fact')];
    const bad = memory('third fact', { confidence: 1.5 });
    const after = memory('fourth fact');
    const res = await importText(api, t, ndjson(HEADER, ...good, bad, after));
    expectProblem(res, 400, 'invalid_request');
    expect(res.body.detail).toMatch(/^line 4: confidence /);
    expect(res.body.errors).toEqual([{ path: 'line 4: confidence', message: expect.any(String) }]);
    expect(await contents(api, t)).toEqual(['first fact', 'second fact']);

    // Fixed, the whole file again: the kept lines are found, the rest is added.
    const fixed = await importText(api, t, ndjson(HEADER, ...good, { ...bad, confidence: 0.9 }, after));
    expect(fixed.status).toBe(200);
    expect(fixed.body).toMatchObject({ lines: 5, imported: { memories: 2 }, existing: 2 });
    expect(await contents(api, t)).toEqual(['first fact', 'fourth fact', 'second fact', 'third fact']);
  });

  it('names the line the database refuses, and what it refers to', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const orphan = memory('in a session nobody has', { binding: 'session', session_id: randomUUID() });
    const res = await importText(api, t, ndjson(HEADER, memory('kept'), 'not json at all'));
    expectProblem(res, 400, 'invalid_request');
    expect(res.body.detail).toBe('line 3: not valid JSON');
    const refused = await importText(api, t, ndjson(HEADER, memory('also kept'), orphan, memory('never')));
    expectProblem(refused, 400, 'invalid_request');
    expect(refused.body.detail).toMatch(/^line 3: it refers to an anchor or session/);
    const yearZero = memory('in year zero', { created_at: '0000-01-01T00:00:00.000Z' });
    const outOfRange = await importText(api, t, ndjson(HEADER, yearZero));
    expectProblem(outOfRange, 400, 'invalid_request');
    expect(outOfRange.body.detail).toBe('line 2: it holds a value the database does not accept');
    expect(await contents(api, t)).toEqual(['also kept', 'kept']);
  });

  it('refuses an anchor id held by another subject (409), a file without header, and a line over the limit (413)', async () => {
    const api = await testApi({ config: { BODY_LIMIT_BYTES: '2048' } });
    const t = await newTenant(api);
    const taken = await api.http.post('/v1/anchors').set(t.auth).send({ anchor_external_id: 'taken' });
    const clash = await importText(api, t, ndjson(HEADER, anchor('another', taken.body.id as string)));
    expectProblem(clash, 409, 'conflict');
    expect(clash.body.detail).toBe(
      `line 2: anchor ${taken.body.id as string} is another subject of this tenant, not "another"`,
    );
    const headless = await importText(api, t, ndjson(memory('x')));
    expectProblem(headless, 400, 'invalid_request');
    expect(headless.body.detail).toMatch(/^line 1: the first record must be the header/);
    const long = await importText(api, t, ndjson(HEADER, memory('y'.repeat(3000))));
    expectProblem(long, 413, 'payload_too_large');
    expect(long.body.detail).toBe('line 2 is longer than 2048 bytes');
  });

  it('takes a gzip body, and refuses other media types (415) and keys without admin (403)', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const gz = await api.http
      .post('/v1/import')
      .set(t.auth)
      .set('Content-Type', 'application/x-ndjson')
      .set('Content-Encoding', 'gzip')
      .send(gzipSync(ndjson(HEADER, memory('compressed fact'))));
    expect(gz.status).toBe(200);
    expect(gz.body.imported.memories).toBe(1);
    expectProblem(await importText(api, t, '<xml/>', '', 'application/xml'), 415, 'unsupported_media_type');
    expectProblem(await importText(api, t, ndjson(HEADER), '?format=csv'), 400, 'invalid_request');
    const rw = await newKey(api, t, ['read', 'write']);
    const refused = await api.http
      .post('/v1/import')
      .set(rw.auth)
      .set('Content-Type', 'application/x-ndjson')
      .send(HEADER);
    expectProblem(refused, 403, 'insufficient_scope');
    expectProblem(await api.http.get('/v1/export').set(rw.auth), 403, 'insufficient_scope');
  });
});

describe(`GET /v1/anchors/{id}/export on ${engine}`, () => {
  it("gives a read key the subject's anchor, sessions and memories of every binding; another tenant gets 404", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const reader = await newKey(api, t, ['read']);
    const a = await api.http.post('/v1/anchors').set(t.auth).send({ anchor_external_id: 'ada' });
    const s = await api.http.post('/v1/sessions').set(t.auth).send({ agent_id: 'a1', anchor_external_id: 'ada' });
    await api.http
      .post('/v1/memories')
      .set(t.auth)
      .send({ agent_id: 'a1', content: 'Lives in Paris', anchor_external_id: 'ada' });
    await api.http
      .post('/v1/memories')
      .set(t.auth)
      .send({ agent_id: 'a1', content: 'Lives in Rome', anchor_external_id: 'ada' });
    await api.http
      .post('/v1/memories')
      .set(t.auth)
      .send({ agent_id: 'a1', content: 'Asked for a refund', session_id: s.body.id });
    await api.http.post('/v1/memories').set(t.auth).send({ agent_id: 'a1', content: 'private to the agent' });

    const res = await api.http.get(`/v1/anchors/${a.body.id as string}/export`).set(reader.auth);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ format: 'agent-memory-subject', version: 1, anchor: { id: a.body.id } });
    expect(res.body.sessions).toEqual([expect.objectContaining({ id: s.body.id })]);
    const memories = res.body.memories as { content: string; status: string; binding: string }[];
    expect(memories.map((m) => [m.content, m.binding, m.status])).toEqual([
      ['Lives in Paris', 'anchored', 'superseded'],
      ['Lives in Rome', 'anchored', 'active'],
      ['Asked for a refund', 'session', 'active'],
    ]);
    const other = await newTenant(api);
    expectProblem(await api.http.get(`/v1/anchors/${a.body.id as string}/export`).set(other.auth), 404, 'not_found');
  });
});
