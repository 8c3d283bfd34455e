import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Response } from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../src/app.js';
import { docsRoute } from '../../src/http/docs.js';
import { createMetrics } from '../../src/http/metrics.js';
import { buildOpenApi } from '../../src/http/openapi.js';
import { opsRoutes } from '../../src/http/routes/ops.js';
import { engine, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { createAnchor, startSession, storeMemory, writeCanon } from '../helpers/store-recall.js';

/**
 * Every operation of the OpenAPI document, called with keys bound to agent A (one key per scope)
 * against agent B's private memories: nothing of them is returned (content, ids, their events),
 * counted, or changed, and an id of one is answered exactly as an unknown id. An operation without
 * cases here fails the walk, so a new route must say how it keeps B's memories out.
 */

type Auth = { Authorization: string };
const SCOPES = ['read', 'write', 'admin'] as const;
type Scope = (typeof SCOPES)[number];

/** What B holds and the walk must never see, and the shared things the cases name. */
interface World {
  api: TestApi;
  t: Tenant;
  keys: Record<Scope, { id: string; auth: Auth }>;
  /** B's private memories: superseded, active (corrected and reinforced), deleted. */
  theirs: string;
  theirsNow: string;
  gone: string;
  mine: string;
  anchorId: string;
  sessionId: string;
  canonId: string;
  bKeyId: string;
  bKeyAuth: Auth;
  setupKeyId: string;
  /** An endpoint the tenant's unbound admin registered before B's memories were stored. */
  webhookId: string;
  /** An ingest job of agent B, queued (no runner runs here): a job is its agents'. */
  jobId: string;
  purgeAnchor: Record<Scope, string>;
  /**
   * Strings no response to A's keys may hold: B's private ids, their events' ids, the words only B's
   * superseded and deleted memories hold (A stores B's current words itself, to probe the partitions).
   */
  secrets: string[];
}

/** B's private memories and their events, as stored: what no call with A's keys may change. */
async function snapshotOfB(w: Pick<World, 'api' | 't' | 'theirs' | 'theirsNow' | 'gone'>): Promise<string> {
  const db = w.api.core.db;
  const memories = await db
    .selectFrom('memories')
    .select(['id', 'content', 'status', 'confidence', 'reinforcement_count', 'superseded_by', 'metadata', 'updated_at'])
    .where('tenant_id', '=', w.t.tenantId)
    .where('agent_id', '=', 'agent-b')
    .where('binding', '=', 'private')
    .orderBy('id')
    .execute();
  const events = await db
    .selectFrom('audit_events')
    .select(['id', 'action', 'memory_id', 'actor_key_id', 'actor_agent_id', 'changes'])
    .where('tenant_id', '=', w.t.tenantId)
    .where((eb) =>
      eb.or([
        eb('memory_id', 'in', [w.theirs, w.theirsNow, w.gone]),
        eb.and([eb('actor_agent_id', '=', 'agent-b'), sql<boolean>`changes->>'binding' = 'private'`]),
      ]),
    )
    .orderBy('seq')
    .execute();
  return JSON.stringify({ memories, events });
}

async function keyOf(api: TestApi, t: Tenant, body: Record<string, unknown>) {
  const res = await api.http.post('/v1/keys').set(t.auth).send(body);
  if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id as string, auth: { Authorization: `Bearer ${res.body.api_key as string}` } };
}

async function populate(): Promise<World> {
  const api = await testApi();
  const t = await newTenant(api);
  // Registered first, so that it holds deliveries of B's events for the walk to look for.
  const webhook = await api.http
    .post('/v1/webhooks')
    .set(t.auth)
    .send({ url: 'https://example.com/walk', events: ['*'] });
  if (webhook.status !== 201) throw new Error(`webhook registration failed: ${webhook.status}`);
  const mine = await storeMemory(api, t.auth, { agent_id: 'agent-a', content: 'Deploys happen at noon' });
  const theirs = await storeMemory(api, t.auth, { agent_id: 'agent-b', content: 'The vault code is QX-4711-VAULT' });
  const corrected = await api.http
    .patch(`/v1/memories/${theirs}`)
    .set(t.auth)
    .send({ content: 'The vault code is QX-4712-VAULT' });
  if (corrected.status !== 200) throw new Error(`correction failed: ${corrected.status}`);
  const theirsNow = corrected.body.id as string;
  const again = await api.http
    .post('/v1/memories')
    .set(t.auth)
    .send({ agent_id: 'agent-b', content: 'The vault code is QX-4712-VAULT' });
  if (again.body.outcome !== 'reinforced') throw new Error('the second store did not reinforce');
  const gone = await storeMemory(api, t.auth, { agent_id: 'agent-b', content: 'The safe code was QX-1234-GONE' });
  if ((await api.http.delete(`/v1/memories/${gone}`).set(t.auth)).status !== 204) throw new Error('delete failed');

  const anchorId = await createAnchor(api, t.auth, 'customer-1');
  await storeMemory(api, t.auth, { agent_id: 'agent-b', content: 'Prefers email over phone', anchor_id: anchorId });
  const sessionId = await startSession(api, t.auth, { agent_id: 'agent-b', anchor_id: anchorId });
  await storeMemory(api, t.auth, {
    agent_id: 'agent-b',
    content: 'Asked about an invoice today',
    session_id: sessionId,
  });
  const canonId = await writeCanon(api, t.auth, 'Always greet politely', 'agent-b');
  const job = await api.http
    .post('/v1/agents/agent-b/conversations/ingest?async=true')
    .set(t.auth)
    .send({ messages: [{ role: 'user', content: 'I keep my spare key under the mat.' }] });
  if (job.status !== 202) throw new Error(`the job was not queued: ${job.status}`);
  const jobId = job.body.id as string;
  const bKey = await keyOf(api, t, { name: 'b', agent_ids: ['agent-b'] });
  const purgeAnchor = {} as Record<Scope, string>;
  const keys = {} as World['keys'];
  for (const scope of SCOPES) {
    purgeAnchor[scope] = await createAnchor(api, t.auth, `walk-purge-${scope}`);
    await storeMemory(api, t.auth, {
      agent_id: 'agent-c',
      content: 'Lives near the harbour',
      anchor_id: purgeAnchor[scope],
    });
    keys[scope] = await keyOf(api, t, { name: `a-${scope}`, scopes: [scope], agent_ids: ['agent-a'] });
  }
  const w = { api, t, theirs, theirsNow, gone };
  const eventIds = (JSON.parse(await snapshotOfB(w)) as { events: { id: string }[] }).events.map((e) => e.id);
  return {
    ...w,
    keys,
    mine,
    anchorId,
    sessionId,
    canonId,
    bKeyId: bKey.id,
    bKeyAuth: bKey.auth,
    setupKeyId: (await api.http.get('/v1/keys/current').set(t.auth)).body.id as string,
    webhookId: webhook.body.id as string,
    jobId,
    purgeAnchor,
    secrets: [theirs, theirsNow, gone, ...eventIds, jobId, 'QX-4711', 'QX-1234'],
  };
}

/** The body as text whatever its type (the export is NDJSON), so that one check reads every answer. */
function asText(req: ReturnType<TestApi['http']['get']>): Promise<Response> {
  return req.buffer(true).parse((r, done) => {
    let text = '';
    r.setEncoding('utf8');
    r.on('data', (c: string) => (text += c));
    r.on('end', () => done(null, text));
  });
}

interface Call {
  w: World;
  scope: Scope;
  auth: Auth;
}

interface Case {
  label: string;
  /**
   * Sends the request. Cases that name an id get it as `id`: B's private ids, then an unknown one,
   * and the answers must be the same (up to the id itself).
   */
  send: (c: Call, id: string) => ReturnType<TestApi['http']['get']>;
  /** Which of B's ids to send (each compared with an unknown id); none: sent once, with no id. */
  ids?: (w: World) => string[];
  /** Further checks of the answer; returns what is wrong. */
  check?: (res: Response, c: Call) => Promise<string | undefined> | string | undefined;
}

const json = (res: Response): Record<string, unknown> => JSON.parse(res.body as string) as Record<string, unknown>;
const bPrivate = (w: World) => [w.theirs, w.theirsNow, w.gone];
const idName = (w: World, id: string): string =>
  ({ [w.theirs]: "B's superseded memory", [w.theirsNow]: "B's active memory", [w.gone]: "B's deleted memory" })[id] ??
  id;
const iso = (d: Date) => d.toISOString();

/** One line of our export format, after its header. */
const ndjson = (...records: object[]) =>
  [{ type: 'header', format: 'agent-memory-export', version: 1, embedder: 'hash' }, ...records]
    .map((r) => JSON.stringify(r))
    .join('\n') + '\n';

const memoryRecord = (id: string, agentId: string, content: string) => {
  const now = iso(new Date());
  return {
    type: 'memory',
    id,
    agent_id: agentId,
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
    created_at: now,
    updated_at: now,
    last_reinforced_at: now,
    mentioned_in_sessions: [],
  };
};

const auditRecord = (memoryId: string, agentId: string, action: string) => ({
  type: 'audit',
  id: randomUUID(),
  at: iso(new Date()),
  action,
  memory_id: memoryId,
  anchor_id: null,
  session_id: null,
  actor: { key_id: null, agent_id: agentId },
  changes: { binding: 'private' },
});

const importing = (c: Call, body: string, query = '') =>
  c.w.api.http.post(`/v1/import${query}`).set(c.auth).set('Content-Type', 'application/x-ndjson').send(body);

const boundRefused = (res: Response) =>
  res.status === 403 ? undefined : `answered ${res.status}: a key bound to agents reached a webhook route`;

const notCreated = (res: Response) => (res.status < 300 ? `answered ${res.status}: it was accepted` : undefined);

/** The cases of each operation, by operationId. */
const CASES: Record<string, Case[]> = {
  getFrontDoor: [{ label: 'GET /', send: (c) => c.w.api.http.get('/').set(c.auth) }],
  getHealth: [{ label: 'GET /healthz', send: (c) => c.w.api.http.get('/healthz').set(c.auth) }],
  getReadiness: [{ label: 'GET /readyz', send: (c) => c.w.api.http.get('/readyz').set(c.auth) }],
  getMetrics: [{ label: 'GET /metrics', send: (c) => c.w.api.http.get('/metrics').set(c.auth) }],
  getOpenApi: [{ label: 'GET /v1/openapi.json', send: (c) => c.w.api.http.get('/v1/openapi.json').set(c.auth) }],
  getApiReference: [{ label: 'GET /docs', send: (c) => c.w.api.http.get('/docs').set(c.auth) }],
  createTenant: [
    {
      label: 'POST /v1/setup with the key instead of the token',
      send: (c) =>
        c.w.api.http
          .post('/v1/setup')
          .set(c.auth)
          .send({ org_name: `walk-${randomUUID()}` }),
      check: notCreated,
    },
  ],
  getCurrentKey: [
    {
      label: 'GET /v1/keys/current',
      send: (c) => c.w.api.http.get('/v1/keys/current').set(c.auth),
      check: (res, c) => (json(res).id === c.w.keys[c.scope].id ? undefined : 'not the calling key'),
    },
  ],
  createKey: [
    {
      label: 'POST /v1/keys for agent B',
      send: (c) =>
        c.w.api.http
          .post('/v1/keys')
          .set(c.auth)
          .send({ name: 'to-b', agent_ids: ['agent-b'] }),
      check: notCreated,
    },
    {
      label: 'POST /v1/keys for A and B',
      send: (c) =>
        c.w.api.http
          .post('/v1/keys')
          .set(c.auth)
          .send({ name: 'to-ab', agent_ids: ['agent-a', 'agent-b'] }),
      check: notCreated,
    },
    {
      label: 'POST /v1/keys unbound',
      send: (c) =>
        c.w.api.http
          .post('/v1/keys')
          .set(c.auth)
          .send({ name: 'unbound', scopes: ['read'] }),
      check: notCreated,
    },
  ],
  listKeys: [
    {
      label: 'GET /v1/keys',
      send: (c) => c.w.api.http.get('/v1/keys').set(c.auth),
      check: (res) => {
        if (res.status !== 200) return undefined;
        const keys = json(res).keys as { agent_ids: string[] | null }[];
        const beyond = keys.filter((k) => k.agent_ids === null || k.agent_ids.some((a) => a !== 'agent-a'));
        return beyond.length > 0 ? `lists ${beyond.length} key(s) not bound to agent A alone` : undefined;
      },
    },
  ],
  revokeKey: [
    {
      label: "DELETE /v1/keys/{B's key}",
      ids: (w) => [w.bKeyId],
      send: (c, id) => c.w.api.http.delete(`/v1/keys/${id}`).set(c.auth),
      check: async (_res, c) =>
        (await c.w.api.http.get('/v1/keys/current').set(c.w.bKeyAuth)).status === 200
          ? undefined
          : "B's key was revoked",
    },
    {
      label: 'DELETE /v1/keys/{the setup key}',
      ids: (w) => [w.setupKeyId],
      send: (c, id) => c.w.api.http.delete(`/v1/keys/${id}`).set(c.auth),
      check: async (_res, c) =>
        (await c.w.api.http.get('/v1/keys/current').set(c.w.t.auth)).status === 200
          ? undefined
          : 'the setup key was revoked',
    },
  ],
  storeMemory: [
    {
      label: 'POST /v1/memories as agent B',
      send: (c) =>
        c.w.api.http.post('/v1/memories').set(c.auth).send({ agent_id: 'agent-b', content: 'Written as B by A' }),
      check: notCreated,
    },
    {
      label: "POST /v1/memories as agent A with B's exact content",
      send: (c) =>
        c.w.api.http
          .post('/v1/memories')
          .set(c.auth)
          .send({ agent_id: 'agent-a', content: 'The vault code is QX-4712-VAULT' }),
    },
  ],
  storeMemories: [
    {
      label: 'POST /v1/memories/batch as agent B, beside an item as agent A',
      send: (c) =>
        c.w.api.http
          .post('/v1/memories/batch')
          .set(c.auth)
          .send({
            items: [
              { agent_id: 'agent-b', content: 'Written as B by A in a batch' },
              { agent_id: 'agent-a', content: 'The vault code is QX-4712-VAULT' },
            ],
          }),
      check: (res) => {
        if (res.status >= 300) return undefined;
        const results = json(res).results as { outcome?: string; problem?: { status: number } }[];
        return results[0]?.problem?.status === 403 ? undefined : "B's item was not refused with 403";
      },
    },
  ],
  recallMemories: [
    {
      label: 'GET /v1/memories/recall as agent B',
      send: (c) => c.w.api.http.get('/v1/memories/recall').set(c.auth).query({ agent_id: 'agent-b', query: 'vault' }),
    },
    {
      label: "GET /v1/memories/recall as agent A for B's words, with B's subject and session",
      send: (c) =>
        c.w.api.http
          .get('/v1/memories/recall')
          .set(c.auth)
          .query({ agent_id: 'agent-a', query: 'vault code safe', session_id: c.w.sessionId, limit: 100 }),
    },
  ],
  recallMemoriesPost: [
    {
      label: 'POST /v1/memories/recall as agent B',
      send: (c) => c.w.api.http.post('/v1/memories/recall').set(c.auth).send({ agent_id: 'agent-b', query: 'vault' }),
    },
    {
      label: "POST /v1/memories/recall as agent A, filtered on agent B and on private memories, with B's session",
      send: (c) =>
        c.w.api.http
          .post('/v1/memories/recall')
          .set(c.auth)
          .send({
            agent_id: 'agent-a',
            query: 'vault code safe',
            session_id: c.w.sessionId,
            limit: 100,
            filter: {
              $or: [{ agent_id: 'agent-b' }, { binding: 'private' }, { 'metadata.secret': { $exists: true } }],
            },
          }),
    },
  ],
  getMemory: [
    {
      label: 'GET /v1/memories/{id}',
      ids: bPrivate,
      send: (c, id) => c.w.api.http.get(`/v1/memories/${id}`).set(c.auth),
    },
  ],
  correctMemory: [
    {
      label: 'PATCH /v1/memories/{id}',
      ids: bPrivate,
      send: (c, id) => c.w.api.http.patch(`/v1/memories/${id}`).set(c.auth).send({ content: 'Rewritten by A' }),
    },
    {
      label: "PATCH /v1/memories/{A's own} as agent B",
      send: (c) =>
        c.w.api.http
          .patch(`/v1/memories/${c.w.mine}`)
          .set(c.auth)
          .send({ content: 'Deploys happen at one', agent_id: 'agent-b' }),
      check: notCreated,
    },
  ],
  deleteMemory: [
    {
      label: 'DELETE /v1/memories/{id}',
      ids: bPrivate,
      send: (c, id) => c.w.api.http.delete(`/v1/memories/${id}`).set(c.auth),
    },
  ],
  getMemoryHistory: [
    {
      label: 'GET /v1/memories/{id}/history',
      ids: bPrivate,
      send: (c, id) => c.w.api.http.get(`/v1/memories/${id}/history`).set(c.auth),
    },
  ],
  ingestConversation: [
    {
      label: 'POST /v1/agents/agent-b/conversations/ingest',
      send: (c) =>
        c.w.api.http
          .post('/v1/agents/agent-b/conversations/ingest')
          .set(c.auth)
          .send({ messages: [{ role: 'user', content: 'I prefer tea over coffee' }] }),
      check: notCreated,
    },
    {
      label: "POST /v1/agents/agent-a/conversations/ingest with B's words",
      send: (c) =>
        c.w.api.http
          .post('/v1/agents/agent-a/conversations/ingest')
          .set(c.auth)
          .send({ messages: [{ role: 'user', content: 'The vault code is QX-4712-VAULT' }] }),
    },
  ],
  createAnchor: [
    {
      label: 'POST /v1/anchors',
      send: (c) => c.w.api.http.post('/v1/anchors').set(c.auth).send({ anchor_external_id: 'customer-1' }),
    },
  ],
  listAnchors: [{ label: 'GET /v1/anchors', send: (c) => c.w.api.http.get('/v1/anchors').set(c.auth) }],
  getAnchor: [
    {
      label: "GET /v1/anchors/{B's subject}",
      send: (c) => c.w.api.http.get(`/v1/anchors/${c.w.anchorId}`).set(c.auth),
    },
    {
      label: 'GET /v1/anchors/{id}',
      ids: bPrivate,
      send: (c, id) => c.w.api.http.get(`/v1/anchors/${id}`).set(c.auth),
    },
  ],
  purgeAnchor: [
    {
      label: 'DELETE /v1/anchors/{a subject}?purge=true',
      send: (c) => c.w.api.http.delete(`/v1/anchors/${c.w.purgeAnchor[c.scope]}`).set(c.auth).query({ purge: 'true' }),
    },
    {
      label: 'DELETE /v1/anchors/{id}?purge=true',
      ids: bPrivate,
      send: (c, id) => c.w.api.http.delete(`/v1/anchors/${id}`).set(c.auth).query({ purge: 'true' }),
    },
  ],
  getAnchorProfile: [
    {
      label: "GET /v1/anchors/{B's subject}/memories",
      send: (c) => c.w.api.http.get(`/v1/anchors/${c.w.anchorId}/memories`).set(c.auth),
    },
    {
      label: "GET /v1/anchors/{B's subject}/memories?status=superseded",
      send: (c) => c.w.api.http.get(`/v1/anchors/${c.w.anchorId}/memories?status=superseded`).set(c.auth),
    },
    {
      label: 'GET /v1/anchors/{id}/memories',
      ids: bPrivate,
      send: (c, id) => c.w.api.http.get(`/v1/anchors/${id}/memories`).set(c.auth),
    },
  ],
  listAnchorSessions: [
    {
      label: "GET /v1/anchors/{B's subject}/sessions",
      send: (c) => c.w.api.http.get(`/v1/anchors/${c.w.anchorId}/sessions`).set(c.auth),
    },
    {
      label: 'GET /v1/anchors/{id}/sessions',
      ids: bPrivate,
      send: (c, id) => c.w.api.http.get(`/v1/anchors/${id}/sessions`).set(c.auth),
    },
  ],
  startSession: [
    {
      label: 'POST /v1/sessions as agent B',
      send: (c) => c.w.api.http.post('/v1/sessions').set(c.auth).send({ agent_id: 'agent-b' }),
      check: notCreated,
    },
  ],
  getSession: [
    { label: "GET /v1/sessions/{B's}", send: (c) => c.w.api.http.get(`/v1/sessions/${c.w.sessionId}`).set(c.auth) },
    {
      label: 'GET /v1/sessions/{id}',
      ids: bPrivate,
      send: (c, id) => c.w.api.http.get(`/v1/sessions/${id}`).set(c.auth),
    },
  ],
  listSessionMemories: [
    {
      label: "GET /v1/sessions/{B's}/memories",
      send: (c) => c.w.api.http.get(`/v1/sessions/${c.w.sessionId}/memories`).set(c.auth),
    },
    {
      label: 'GET /v1/sessions/{id}/memories',
      ids: bPrivate,
      send: (c, id) => c.w.api.http.get(`/v1/sessions/${id}/memories`).set(c.auth),
    },
  ],
  endSession: [
    {
      label: 'POST /v1/sessions/{id}/end',
      ids: bPrivate,
      send: (c, id) => c.w.api.http.post(`/v1/sessions/${id}/end`).set(c.auth).send({}),
    },
  ],
  writeCanon: [
    {
      label: 'POST /v1/canon as agent B',
      send: (c) => c.w.api.http.post('/v1/canon').set(c.auth).send({ agent_id: 'agent-b', content: 'Be brief' }),
      check: notCreated,
    },
  ],
  listCanon: [{ label: 'GET /v1/canon', send: (c) => c.w.api.http.get('/v1/canon').set(c.auth) }],
  getCanon: [
    { label: "GET /v1/canon/{B's entry}", send: (c) => c.w.api.http.get(`/v1/canon/${c.w.canonId}`).set(c.auth) },
    { label: 'GET /v1/canon/{id}', ids: bPrivate, send: (c, id) => c.w.api.http.get(`/v1/canon/${id}`).set(c.auth) },
  ],
  deleteCanon: [
    {
      label: 'DELETE /v1/canon/{id}',
      ids: bPrivate,
      send: (c, id) => c.w.api.http.delete(`/v1/canon/${id}`).set(c.auth),
    },
  ],
  // Webhooks report every agent's events: a bound key may not manage them at all (403), so no
  // endpoint of the tenant, and no event of B's through one, reaches it.
  createWebhook: [
    {
      label: 'POST /v1/webhooks',
      send: (c) =>
        c.w.api.http
          .post('/v1/webhooks')
          .set(c.auth)
          .send({ url: 'https://example.com/b', events: ['*'] }),
      check: boundRefused,
    },
  ],
  listJobs: [
    { label: "GET /v1/jobs (B's job among the tenant's)", send: (c) => c.w.api.http.get('/v1/jobs').set(c.auth) },
  ],
  getJob: [
    {
      label: "GET /v1/jobs/{B's job}",
      send: (c) => c.w.api.http.get(`/v1/jobs/${c.w.jobId}`).set(c.auth),
    },
  ],
  listWebhooks: [
    { label: 'GET /v1/webhooks', send: (c) => c.w.api.http.get('/v1/webhooks').set(c.auth), check: boundRefused },
  ],
  getWebhook: [
    {
      label: "GET /v1/webhooks/{the tenant's endpoint}",
      send: (c) => c.w.api.http.get(`/v1/webhooks/${c.w.webhookId}`).set(c.auth),
      check: boundRefused,
    },
  ],
  updateWebhook: [
    {
      label: "PATCH /v1/webhooks/{the tenant's endpoint}",
      send: (c) => c.w.api.http.patch(`/v1/webhooks/${c.w.webhookId}`).set(c.auth).send({ enabled: false }),
      check: boundRefused,
    },
  ],
  deleteWebhook: [
    {
      label: "DELETE /v1/webhooks/{the tenant's endpoint}",
      send: (c) => c.w.api.http.delete(`/v1/webhooks/${c.w.webhookId}`).set(c.auth),
      check: boundRefused,
    },
  ],
  listWebhookDeliveries: [
    {
      label: "GET /v1/webhooks/{the tenant's endpoint}/deliveries",
      send: (c) => c.w.api.http.get(`/v1/webhooks/${c.w.webhookId}/deliveries`).set(c.auth),
      check: boundRefused,
    },
  ],
  listAuditEvents: [
    { label: 'GET /v1/audit', send: (c) => c.w.api.http.get('/v1/audit').set(c.auth).query({ limit: 200 }) },
    ...['created', 'reinforced', 'corrected', 'deleted'].map((action) => ({
      label: `GET /v1/audit?action=${action}`,
      send: (c: Call) => c.w.api.http.get('/v1/audit').set(c.auth).query({ action, limit: 200 }),
    })),
    {
      label: 'GET /v1/audit?memory_id={id}',
      ids: bPrivate,
      send: (c, id) => c.w.api.http.get('/v1/audit').set(c.auth).query({ memory_id: id }),
    },
  ],
  exportAnchor: [
    {
      label: "GET /v1/anchors/{B's subject}/export",
      send: (c) => c.w.api.http.get(`/v1/anchors/${c.w.anchorId}/export`).set(c.auth),
    },
    {
      label: 'GET /v1/anchors/{id}/export',
      ids: bPrivate,
      send: (c, id) => c.w.api.http.get(`/v1/anchors/${id}/export`).set(c.auth),
    },
  ],
  exportTenant: [false, true].map((audit) => ({
    label: `GET /v1/export?audit=${audit}`,
    send: (c: Call) => c.w.api.http.get('/v1/export').set(c.auth).query({ audit }),
    check: (res: Response) => {
      if (res.status !== 200) return undefined;
      const records = (res.body as string)
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { type: string; counts?: Record<string, number> });
      const end = records.at(-1);
      const count = (type: string) => records.filter((r) => r.type === type).length;
      const written = { memories: count('memory'), canon: count('canon'), audit: count('audit') };
      const counted = { memories: end?.counts?.memories, canon: end?.counts?.canon, audit: end?.counts?.audit };
      return JSON.stringify(written) === JSON.stringify(counted)
        ? undefined
        : `the end record counts ${JSON.stringify(counted)} but the export holds ${JSON.stringify(written)}`;
    },
  })),
  importRecords: [
    {
      label: "POST /v1/import of a private memory of agent B's",
      send: (c) => importing(c, ndjson(memoryRecord(randomUUID(), 'agent-b', 'Imported as B by A'))),
    },
    {
      label: 'POST /v1/import?format=mem0&agent_id=agent-b',
      send: (c) =>
        importing(
          c,
          JSON.stringify({ id: randomUUID(), memory: 'Imported as B by A' }) + '\n',
          '?format=mem0&agent_id=agent-b',
        ),
    },
    {
      label: "POST /v1/import of an audit record with agent B as actor, for B's memory",
      send: (c) => importing(c, ndjson(auditRecord(c.w.theirsNow, 'agent-b', 'deleted'))),
    },
    {
      label: "POST /v1/import of an audit record with agent A as actor, for B's memory",
      send: (c) => importing(c, ndjson(auditRecord(c.w.theirsNow, 'agent-a', 'deleted'))),
    },
    {
      label: 'POST /v1/import of an audit record with agent B as actor',
      send: (c) => importing(c, ndjson(auditRecord(randomUUID(), 'agent-b', 'created'))),
    },
    {
      label: "POST /v1/import?format=mem0 of agent A's memory under the id of B's",
      ids: bPrivate,
      send: (c, id) =>
        importing(
          c,
          JSON.stringify({ id, memory: 'Imported by A under a taken id', agent_id: 'agent-a' }) + '\n',
          '?format=mem0&agent_id=agent-a',
        ),
    },
    {
      label: "POST /v1/import of agent A's memory under the id of B's",
      ids: bPrivate,
      send: (c, id) => importing(c, ndjson(memoryRecord(id, 'agent-a', 'Imported by A under a taken id'))),
    },
  ],
};

/** The operations of the generated document, as the server builds it. */
function documentOperations(): string[] {
  const metricsConfig = { token: undefined, port: undefined };
  const document = buildOpenApi(
    [...opsRoutes(createMetrics(undefined), metricsConfig, () => document), docsRoute, ...API_ROUTES],
    '0',
  ) as { paths: Record<string, Record<string, { operationId: string }>> };
  return Object.values(document.paths).flatMap((ops) => Object.values(ops).map((o) => o.operationId));
}

const OPERATIONS = documentOperations();

describe(`every operation with keys bound to agent A, against agent B's private memories, on ${engine}`, () => {
  let w: World;
  beforeAll(async () => {
    w = await populate();
  });

  it('has cases for exactly the operations of the document the server serves', async () => {
    const served = (await w.api.http.get('/v1/openapi.json')).body as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    const servedIds = Object.values(served.paths).flatMap((ops) => Object.values(ops).map((o) => o.operationId));
    expect(servedIds.sort()).toEqual([...OPERATIONS].sort());
    expect(Object.keys(CASES).sort()).toEqual([...OPERATIONS].sort());
  });

  it.each(OPERATIONS)('%s shows, counts and changes nothing of B', async (operationId) => {
    // Each of B's ids is compared with the same unknown id every time, so that the two have the
    // same history: an import that took the unknown id once answers `existing` the next time, as
    // it does for B's id (imported under an id of the key's own).
    const twins = new Map<string, string>();
    const twinOf = (id: string): string => twins.get(id) ?? twins.set(id, randomUUID()).get(id) ?? id;
    const cases = CASES[operationId];
    expect(cases, `no walk case for ${operationId}`).toBeDefined();
    const failures: string[] = [];
    for (const scope of SCOPES) {
      const call: Call = { w, scope, auth: w.keys[scope].auth };
      for (const kase of cases ?? []) {
        const ids = kase.ids?.(w) ?? [undefined];
        for (const id of ids) {
          const where = `${kase.label} [${scope}${id ? `, ${idName(w, id)}` : ''}]`;
          const before = await snapshotOfB(w);
          const res = await asText(kase.send(call, id ?? ''));
          const body = id ? (res.body as string).replaceAll(id, '{id}') : (res.body as string);
          if (res.status >= 500) failures.push(`${where}: answered ${res.status}`);
          const leaked = w.secrets.filter((s) => body.includes(s));
          if (leaked.length > 0) failures.push(`${where}: the answer holds ${leaked.join(', ')}`);
          if (id) {
            const unknown = twinOf(id);
            const other = await asText(kase.send(call, unknown));
            const otherBody = (other.body as string).replaceAll(unknown, '{id}');
            if (other.status !== res.status || otherBody !== body)
              failures.push(
                `${where}: B's id answers ${res.status} ${body.slice(0, 200)}, an unknown id ${other.status} ${otherBody.slice(0, 200)}`,
              );
          }
          const problem = await kase.check?.(res, call);
          if (problem) failures.push(`${where}: ${problem}`);
          if ((await snapshotOfB(w)) !== before)
            failures.push(`${where}: B's private memories or their events changed`);
        }
      }
    }
    expect(failures).toEqual([]);
  });
});
