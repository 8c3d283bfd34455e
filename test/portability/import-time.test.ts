import { describe, expect, it } from 'vitest';
import { engine, newTenant, testApi } from '../helpers/harness.js';
import { exportText, importText, memoryRecord } from '../helpers/portability.js';

const HEADER = JSON.stringify({ type: 'header', format: 'agent-memory-export', version: 1, embedder: 'any' });
const ndjson = (...records: object[]): string => [HEADER, ...records.map((r) => JSON.stringify(r))].join('\n') + '\n';

describe(`event time, expiry and pins in export and import on ${engine}`, () => {
  it('keeps them through an import and writes them in the export', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const kept = memoryRecord('Moved to Lisbon in June', {
      occurred_at: '2025-06-01T10:00:00.000Z',
      expires_at: '2099-01-01T00:00:00.000Z',
      pinned: true,
    });
    const newer = memoryRecord('Moved to Porto');
    const old = memoryRecord('Lived in Faro', {
      status: 'superseded',
      superseded_by: newer.id,
      superseded_at: '2026-01-05T00:00:00.000Z',
    });
    const res = await importText(api, t, ndjson(kept, newer, old));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const got = (await api.http.get(`/v1/memories/${kept.id}`).set(t.auth)).body;
    expect(got).toMatchObject({
      occurred_at: '2025-06-01T10:00:00.000Z',
      expires_at: '2099-01-01T00:00:00.000Z',
      pinned: true,
    });
    expect((await api.http.get(`/v1/memories/${old.id}`).set(t.auth)).body).toMatchObject({
      superseded_at: '2026-01-05T00:00:00.000Z',
    });

    const lines = (await exportText(api, t))
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.find((r) => r['id'] === kept.id)).toMatchObject({
      occurred_at: '2025-06-01T10:00:00.000Z',
      expires_at: '2099-01-01T00:00:00.000Z',
      pinned: true,
      superseded_at: null,
    });
  });

  it('imports a file from before these fields: it happened when stored, superseded at its last update', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const plain = memoryRecord('Likes jazz', { created_at: '2025-01-01T00:00:00.000Z' });
    const newer = memoryRecord('Likes blues');
    const old = memoryRecord('Likes rock', {
      status: 'superseded',
      superseded_by: newer.id,
      updated_at: '2026-01-03T00:00:00.000Z',
    });
    expect((await importText(api, t, ndjson(plain, newer, old))).status).toBe(200);
    expect((await api.http.get(`/v1/memories/${plain.id}`).set(t.auth)).body).toMatchObject({
      occurred_at: '2025-01-01T00:00:00.000Z',
      expires_at: null,
      pinned: false,
      superseded_at: null,
    });
    expect((await api.http.get(`/v1/memories/${old.id}`).set(t.auth)).body).toMatchObject({
      superseded_at: '2026-01-03T00:00:00.000Z',
    });
  });
});
