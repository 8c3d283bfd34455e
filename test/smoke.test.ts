import { describe, expect, it } from 'vitest';
import { engine, newTenant, testApi } from './helpers/harness.js';

describe(`service on ${engine}`, () => {
  it('stores a memory for a subject and recalls it', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const stored = await api.http
      .post('/v1/memories')
      .set(t.auth)
      .send({ agent_id: 'a1', content: 'Alice prefers email', anchor_external_id: 'alice' });
    expect(stored.status).toBe(201);
    const recalled = await api.http
      .get('/v1/memories/recall')
      .set(t.auth)
      .query({ agent_id: 'a1', query: 'email', anchor_external_id: 'alice' });
    expect(recalled.status).toBe(200);
    expect((recalled.body as { results: { id: string }[] }).results.map((r) => r.id)).toEqual([stored.body.id]);
  });
});
