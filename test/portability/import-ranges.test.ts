import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { engine, newTenant, testApi } from '../helpers/harness.js';
import { expectProblem } from '../helpers/problem.js';
import { importText, memoryRecord } from '../helpers/portability.js';

const HEADER = JSON.stringify({ type: 'header', format: 'agent-memory-export', version: 1, embedder: 'any' });
const AT = '2026-01-02T03:04:05.678Z';

const memory = (content: string, extra: Record<string, unknown> = {}) => memoryRecord(content, extra);

const audit = (extra: Record<string, unknown> = {}) => ({
  type: 'audit',
  id: randomUUID(),
  at: AT,
  action: 'created',
  memory_id: null,
  anchor_id: null,
  session_id: null,
  actor: { key_id: null, agent_id: 'agent-1' },
  changes: {},
  ...extra,
});

const ndjson = (...records: object[]): string => [HEADER, ...records.map((r) => JSON.stringify(r))].join('\n') + '\n';

describe(`imported counters and confidences on ${engine}`, () => {
  it('refuses a reinforcement count a later store would overflow, and a confidence the service never gives', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    for (const [field, value] of [
      ['reinforcement_count', 2_147_483_647],
      ['reinforcement_count', 1_000_000_001],
      ['confidence', 0],
      ['confidence', -0.1],
      ['decay_rate', -1],
    ] as const) {
      const res = await importText(api, t, ndjson(memory(`a fact with ${field} ${value}`, { [field]: value })));
      expectProblem(res, 400, 'invalid_request');
      expect(res.body.errors).toEqual([{ path: `line 2: ${field}`, message: expect.any(String) }]);
    }
    const unknownAction = await importText(api, t, ndjson(audit({ action: 'teleported' })));
    expectProblem(unknownAction, 400, 'invalid_request');
    expect(unknownAction.body.errors).toEqual([{ path: 'line 2: action', message: expect.any(String) }]);
  });

  it('takes the largest count it allows, and storing that memory again reinforces it rather than failing', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const big = memory('Prefers tea to coffee', { reinforcement_count: 1_000_000_000, confidence: 1 });
    const res = await importText(api, t, ndjson(big));
    expect(res.status).toBe(200);
    const again = await api.http
      .post('/v1/memories')
      .set(t.auth)
      .send({ agent_id: 'agent-1', content: 'Prefers tea to coffee' });
    expect(again.status).toBeLessThan(300);
    expect(again.body).toMatchObject({ id: big.id, reinforcement_count: 1_000_000_001 });
  });

  it("lists a subject's profile whose imported memories decayed past what a double holds", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const anchorId = randomUUID();
    const anchor = {
      type: 'anchor',
      id: anchorId,
      anchor_external_id: 'ada',
      name: null,
      metadata: {},
      created_at: AT,
    };
    const anchored = { binding: 'anchored', anchor_id: anchorId };
    const file = ndjson(
      anchor,
      memory('Fades fast', { ...anchored, decay_rate: 1000 }),
      memory('Barely believed', { ...anchored, confidence: 1e-300, last_reinforced_at: '1970-01-01T00:00:00.000Z' }),
      memory('Holds', anchored),
    );
    expect((await importText(api, t, file)).status).toBe(200);
    const profile = await api.http.get(`/v1/anchors/${anchorId}/memories`).set(t.auth);
    expect(profile.status).toBe(200);
    expect((profile.body.memories as { content: string }[]).map((m) => m.content)[0]).toBe('Holds');
    expect(profile.body.memories).toHaveLength(3);
  });
});
