import { randomUUID } from 'node:crypto';
import type { Tenant, TestApi } from './harness.js';

/** GET /v1/export as text. */
export async function exportText(api: TestApi, t: Tenant, query = ''): Promise<string> {
  const res = await api.http
    .get(`/v1/export${query}`)
    .set(t.auth)
    .buffer(true)
    .parse((r, done) => {
      let text = '';
      r.setEncoding('utf8');
      r.on('data', (c: string) => (text += c));
      r.on('end', () => done(null, text));
    });
  if (res.status !== 200) throw new Error(`export failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as string;
}

export const sortedLines = (ndjson: string): string[] =>
  ndjson
    .split('\n')
    .filter((l) => l !== '')
    .sort();

export async function importText(
  api: TestApi,
  t: Tenant,
  body: string | Buffer,
  query = '',
  type = 'application/x-ndjson',
) {
  return api.http.post(`/v1/import${query}`).set(t.auth).set('Content-Type', type).send(body);
}

/** The header line's record of our export format. */
export const exportHeader = (embedder = 'any') => ({
  type: 'header',
  format: 'agent-memory-export',
  version: 1,
  embedder,
});

/** A private memory record of our export format, as an export writes one; `extra` overrides any field. */
export function memoryRecord(
  content: string,
  extra: Record<string, unknown> = {},
): { id: string } & Record<string, unknown> {
  const at = '2026-01-02T03:04:05.678Z';
  return {
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
    created_at: at,
    updated_at: at,
    last_reinforced_at: at,
    mentioned_in_sessions: [],
    ...extra,
  };
}
