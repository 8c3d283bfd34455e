import type { TestApi } from './harness.js';

/**
 * Small HTTP steps shared by the isolation, retrieval and audit tests. Each one asserts the status
 * it expects, so a failing setup step names itself instead of surfacing later as a wrong result.
 */
type Auth = { Authorization: string };

export interface RecalledMemory {
  id: string;
  binding: string;
  anchor_id: string | null;
  session_id: string | null;
  agent_id: string;
  content: string;
  score: number;
  score_details: {
    semantic: number;
    lexical: number;
    confidence: number;
    recency: number;
    prior: number;
  };
}

function expectStatus(res: { status: number; body: unknown }, status: number, what: string): void {
  if (res.status !== status)
    throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
}

/** POST /v1/memories, expecting a new memory (201); returns its id. */
export async function storeMemory(api: TestApi, auth: Auth, body: Record<string, unknown>): Promise<string> {
  const res = await api.http.post('/v1/memories').set(auth).send(body);
  expectStatus(res, 201, 'store');
  return (res.body as { id: string }).id;
}

/** POST /v1/canon, expecting a new entry (201); returns its id. */
export async function writeCanon(api: TestApi, auth: Auth, content: string, agentId = 'admin-agent'): Promise<string> {
  const res = await api.http.post('/v1/canon').set(auth).send({ agent_id: agentId, content });
  expectStatus(res, 201, 'canon');
  return (res.body as { id: string }).id;
}

/** POST /v1/sessions; returns the session id. */
export async function startSession(api: TestApi, auth: Auth, body: Record<string, unknown>): Promise<string> {
  const res = await api.http.post('/v1/sessions').set(auth).send(body);
  expectStatus(res, 201, 'session');
  return (res.body as { id: string }).id;
}

/** POST /v1/anchors; returns the anchor id. */
export async function createAnchor(api: TestApi, auth: Auth, externalId: string): Promise<string> {
  const res = await api.http.post('/v1/anchors').set(auth).send({ anchor_external_id: externalId });
  expectStatus(res, 201, 'anchor');
  return (res.body as { id: string }).id;
}

/** GET /v1/memories/recall, expecting 200; returns the ranked results. */
export async function recall(
  api: TestApi,
  auth: Auth,
  query: Record<string, string | number>,
): Promise<RecalledMemory[]> {
  const res = await api.http.get('/v1/memories/recall').set(auth).query(query);
  expectStatus(res, 200, 'recall');
  return (res.body as { results: RecalledMemory[] }).results;
}

export const ids = (items: readonly { id: string }[]): string[] => items.map((i) => i.id);
export const sorted = (values: readonly string[]): string[] => [...values].sort();
