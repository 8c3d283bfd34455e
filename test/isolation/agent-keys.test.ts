import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { authenticate } from '../../src/domain/tenancy/keys.js';
import { engine, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { createAnchor, ids, recall, startSession, storeMemory } from '../helpers/store-recall.js';
import { expectProblem } from '../helpers/problem.js';
import { exportText } from '../helpers/portability.js';
import { call, inProcessClient, ok, readJson, text } from '../helpers/mcp.js';

/**
 * Keys bound to agents (POST /v1/keys with agent_ids): such a key acts only as its agents, over
 * REST and MCP, and another agent's private memories do not exist for it.
 */

type Auth = { Authorization: string };

interface CreatedKey {
  id: string;
  apiKey: string;
  auth: Auth;
  body: Record<string, unknown>;
}

async function createKey(api: TestApi, auth: Auth, body: Record<string, unknown>): Promise<CreatedKey> {
  const res = await api.http.post('/v1/keys').set(auth).send(body);
  if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  const apiKey = res.body.api_key as string;
  return { id: res.body.id as string, apiKey, auth: { Authorization: `Bearer ${apiKey}` }, body: res.body };
}

const boundKey = (api: TestApi, t: Tenant, agentIds: string[], scopes = ['read', 'write']) =>
  createKey(api, t.auth, { name: `bound-${agentIds.join('-')}`, scopes, agent_ids: agentIds });

/** One private memory of each of two agents, one anchored memory of agent-b, made with the setup key. */
async function populate(api: TestApi, t: Tenant) {
  const mine = await storeMemory(api, t.auth, { agent_id: 'agent-a', content: 'The deploy window opens at noon' });
  const theirs = await storeMemory(api, t.auth, { agent_id: 'agent-b', content: 'The vault code is 4711' });
  const anchored = await storeMemory(api, t.auth, {
    agent_id: 'agent-b',
    content: 'Prefers email over phone',
    anchor_external_id: 'customer-1',
  });
  return { mine, theirs, anchored };
}

describe(`keys bound to agents: key management on ${engine}`, () => {
  it('shows agent_ids when created and listed, null for an unbound key, each agent once', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const bound = await createKey(api, t.auth, { name: 'bot', agent_ids: ['agent-a', 'agent-b', 'agent-a'] });
    expect(bound.body).toMatchObject({ name: 'bot', scopes: ['read', 'write'], agent_ids: ['agent-a', 'agent-b'] });
    const unbound = await createKey(api, t.auth, { name: 'free' });
    expect(unbound.body.agent_ids).toBeNull();

    const listed = await api.http.get('/v1/keys').set(t.auth);
    const byId = new Map((listed.body.keys as { id: string; agent_ids: unknown }[]).map((k) => [k.id, k.agent_ids]));
    expect(byId.get(bound.id)).toEqual(['agent-a', 'agent-b']);
    expect(byId.get(unbound.id)).toBeNull();
    expect(listed.body.keys[0].agent_ids).toBeNull(); // the setup key
  });

  it('refuses an empty list and invalid agent ids', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    for (const agent_ids of [[], [''], ['x'.repeat(201)], 'agent-a', [42]]) {
      const res = await api.http.post('/v1/keys').set(t.auth).send({ name: 'k', agent_ids });
      expectProblem(res, 400, 'invalid_request');
      expect(res.body.errors[0].path).toMatch(/^agent_ids/);
    }
  });

  it('lets a bound admin key create only keys bound to some of its own agents', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const admin = await boundKey(api, t, ['agent-a', 'agent-b'], ['read', 'write', 'admin']);
    const unbound = await api.http.post('/v1/keys').set(admin.auth).send({ name: 'escape' });
    expectProblem(unbound, 403, 'insufficient_scope');
    const other = await api.http
      .post('/v1/keys')
      .set(admin.auth)
      .send({ name: 'other', agent_ids: ['agent-a', 'agent-c'] });
    expectProblem(other, 403, 'insufficient_scope');
    expect(other.body.detail).toContain('"agent-c"');
    const subset = await createKey(api, admin.auth, { name: 'narrow', agent_ids: ['agent-b'] });
    expect(subset.body.agent_ids).toEqual(['agent-b']);
    // Refused creations left no key behind.
    const names = (await api.http.get('/v1/keys').set(t.auth)).body.keys.map((k: { name: string }) => k.name);
    expect(names).not.toContain('escape');
    expect(names).not.toContain('other');
  });
});

describe(`keys bound to agents over REST on ${engine}`, () => {
  it('refuses every agent_id outside the list with 403 naming the agent, and stores nothing', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const key = await boundKey(api, t, ['agent-a'], ['read', 'write', 'admin']);
    const attempts = [
      api.http.post('/v1/memories').set(key.auth).send({ agent_id: 'agent-b', content: 'Written as someone else' }),
      api.http.get('/v1/memories/recall').set(key.auth).query({ agent_id: 'agent-b', query: 'vault code' }),
      api.http.post('/v1/sessions').set(key.auth).send({ agent_id: 'agent-b' }),
      api.http
        .post('/v1/agents/agent-b/conversations/ingest')
        .set(key.auth)
        .send({ messages: [{ role: 'user', content: 'I prefer tea over coffee' }] }),
      api.http.post('/v1/canon').set(key.auth).send({ agent_id: 'agent-b', content: 'Be polite' }),
    ];
    for (const res of await Promise.all(attempts)) {
      expectProblem(res, 403, 'insufficient_scope');
      expect(res.body.detail).toContain('"agent-b"');
    }
    const audit = await api.http.get('/v1/audit').set(t.auth);
    expect(audit.body.events.map((e: { action: string }) => e.action)).toEqual(['key_created', 'key_created']);
    expect(audit.body.events[1].changes).toMatchObject({ agent_ids: ['agent-a'] });
  });

  it('acts as its own agents: store, recall, sessions, ingest and canon', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const key = await boundKey(api, t, ['agent-a', 'agent-c'], ['read', 'write', 'admin']);
    const stored = await storeMemory(api, key.auth, { agent_id: 'agent-c', content: 'Standups are at nine' });
    expect(ids(await recall(api, key.auth, { agent_id: 'agent-c', query: 'standups nine', limit: 50 }))).toEqual([
      stored,
    ]);
    await startSession(api, key.auth, { agent_id: 'agent-a' });
    const ingested = await api.http
      .post('/v1/agents/agent-a/conversations/ingest')
      .set(key.auth)
      .send({ messages: [{ role: 'user', content: 'I prefer tea over coffee' }] });
    expect(ingested.status).toBe(200);
    const canon = await api.http.post('/v1/canon').set(key.auth).send({ agent_id: 'agent-a', content: 'Be polite' });
    expect(canon.status).toBe(201);
  });

  it("answers another agent's private memory by id as missing, and leaves it alone", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const m = await populate(api, t);
    const key = await boundKey(api, t, ['agent-a']);
    const missing = randomUUID();

    for (const path of [`/v1/memories/${m.theirs}`, `/v1/memories/${m.theirs}/history`]) {
      const res = await api.http.get(path).set(key.auth);
      const none = await api.http.get(path.replace(m.theirs, missing)).set(key.auth);
      expectProblem(res, 404, 'not_found');
      expect(res.body).toEqual(none.body);
    }
    const deleted = await api.http.delete(`/v1/memories/${m.theirs}`).set(key.auth);
    expectProblem(deleted, 404, 'not_found');
    expect((await api.http.get(`/v1/memories/${m.theirs}`).set(t.auth)).status).toBe(200);

    // Its own private memory and shared (anchored) memories of other agents stay readable.
    expect((await api.http.get(`/v1/memories/${m.mine}`).set(key.auth)).status).toBe(200);
    expect((await api.http.get(`/v1/memories/${m.anchored}`).set(key.auth)).body.agent_id).toBe('agent-b');
    expect((await api.http.get(`/v1/memories/${m.mine}/history`).set(key.auth)).status).toBe(200);
  });

  it("keeps the history of another agent's deleted private memory hidden", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const m = await populate(api, t);
    expect((await api.http.delete(`/v1/memories/${m.theirs}`).set(t.auth)).status).toBe(204);
    expect((await api.http.delete(`/v1/memories/${m.anchored}`).set(t.auth)).status).toBe(204);
    const key = await boundKey(api, t, ['agent-a']);
    expectProblem(await api.http.get(`/v1/memories/${m.theirs}/history`).set(key.auth), 404, 'not_found');
    // A deleted shared memory keeps its trail for every key, as before.
    const anchored = await api.http.get(`/v1/memories/${m.anchored}/history`).set(key.auth);
    expect(anchored.body.events.map((e: { action: string }) => e.action)).toEqual(['created', 'deleted']);
    // The unbound key still sees the private trail.
    const unbound = await api.http.get(`/v1/memories/${m.theirs}/history`).set(t.auth);
    expect(unbound.body.events.map((e: { action: string }) => e.action)).toEqual(['created', 'deleted']);
  });

  it("never lists another agent's private memory: recall, anchor profiles, sessions", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const m = await populate(api, t);
    const anchorId = await createAnchor(api, t.auth, 'customer-2');
    const sessionId = await startSession(api, t.auth, { agent_id: 'agent-b', anchor_id: anchorId });
    const inSession = await storeMemory(api, t.auth, {
      agent_id: 'agent-b',
      content: 'Calling about the vault code today',
      session_id: sessionId,
    });
    const key = await boundKey(api, t, ['agent-a']);
    const seen = ids(
      await recall(api, key.auth, {
        agent_id: 'agent-a',
        query: 'vault code deploy window email',
        anchor_external_id: 'customer-1',
        limit: 100,
      }),
    );
    expect(seen.sort()).toEqual([m.mine, m.anchored].sort());
    const bySession = ids(
      await recall(api, key.auth, { agent_id: 'agent-a', query: 'vault code', session_id: sessionId, limit: 100 }),
    );
    expect(bySession.sort()).toEqual([m.mine, inSession].sort());
    const anchors = await api.http.get('/v1/anchors').set(key.auth).query({ anchor_external_id: 'customer-1' });
    const profile = await api.http.get(`/v1/anchors/${anchors.body.anchors[0].id}/memories`).set(key.auth);
    expect(ids(profile.body.memories)).toEqual([m.anchored]);
  });

  it('changes nothing for a key without agent_ids', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const m = await populate(api, t);
    const key = await createKey(api, t.auth, { name: 'unbound', scopes: ['read', 'write'] });
    expect((await api.http.get(`/v1/memories/${m.theirs}`).set(key.auth)).status).toBe(200);
    const asB = await recall(api, key.auth, { agent_id: 'agent-b', query: 'vault code', limit: 100 });
    expect(ids(asB)).toEqual([m.theirs]);
    await storeMemory(api, key.auth, { agent_id: 'agent-z', content: 'Anyone may be named' });
    expect((await api.http.delete(`/v1/memories/${m.theirs}`).set(key.auth)).status).toBe(204);
  });
});

describe(`keys bound to agents: export, audit and keys on ${engine}`, () => {
  /** The export's lines as records, read with the key given. */
  async function exported(api: TestApi, auth: Auth, query = '?audit=true') {
    const lines = (await exportText(api, { tenantId: '', adminKey: '', auth }, query)).split('\n').filter(Boolean);
    return lines.map((l) => JSON.parse(l) as { type: string; id?: string; memory_id?: string; counts?: object });
  }

  it("exports no other agent's private memory nor its events, and counts what it exports", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const m = await populate(api, t);
    const gone = await storeMemory(api, t.auth, { agent_id: 'agent-b', content: 'The old vault code was 1234' });
    expect((await api.http.delete(`/v1/memories/${gone}`).set(t.auth)).status).toBe(204);
    const key = await boundKey(api, t, ['agent-a'], ['admin']);

    const records = await exported(api, key.auth);
    const text = JSON.stringify(records);
    for (const hidden of [m.theirs, gone, 'vault code']) expect(text).not.toContain(hidden);
    expect(records.filter((r) => r.type === 'memory').map((r) => r.id)).toEqual([m.mine, m.anchored]);
    const memoryEvents = records.filter((r) => r.type === 'audit' && r.memory_id).map((r) => r.memory_id);
    expect(memoryEvents).toEqual([m.mine, m.anchored]);
    const count = (type: string) => records.filter((r) => r.type === type).length;
    expect(records.at(-1)).toEqual({
      type: 'end',
      counts: { anchors: 1, sessions: 0, memories: 2, canon: 0, audit: count('audit') },
    });
    // The unbound key still exports the whole tenant.
    const whole = await exported(api, t.auth);
    expect(whole.filter((r) => r.type === 'memory').map((r) => r.id)).toEqual([m.mine, m.theirs, m.anchored]);
  });

  it("lists no event of another agent's private memory, and answers its id as an unknown one", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const m = await populate(api, t);
    const again = await api.http
      .post('/v1/memories')
      .set(t.auth)
      .send({ agent_id: 'agent-b', content: 'The vault code is 4711' });
    expect(again.body).toMatchObject({ id: m.theirs, outcome: 'reinforced' });
    const gone = await storeMemory(api, t.auth, { agent_id: 'agent-b', content: 'The old vault code was 1234' });
    expect((await api.http.delete(`/v1/memories/${gone}`).set(t.auth)).status).toBe(204);
    const key = await boundKey(api, t, ['agent-a'], ['admin']);

    const all = await api.http.get('/v1/audit').set(key.auth).query({ limit: 200 });
    expect(all.status).toBe(200);
    const memoryIds = all.body.events.flatMap((e: { memory_id: string | null }) => (e.memory_id ? [e.memory_id] : []));
    expect(memoryIds).toEqual([m.mine, m.anchored]);
    expect(JSON.stringify(all.body)).not.toContain('agent-b"},"changes":{"binding":"private"');

    const unknown = await api.http.get('/v1/audit').set(key.auth).query({ memory_id: randomUUID() });
    expect(unknown.body).toEqual({ events: [], next_cursor: null });
    for (const id of [m.theirs, gone]) {
      for (const action of [undefined, 'created', 'reinforced', 'deleted']) {
        const res = await api.http
          .get('/v1/audit')
          .set(key.auth)
          .query({ memory_id: id, ...(action ? { action } : {}) });
        expect({ id, action, body: res.body }).toEqual({ id, action, body: unknown.body });
      }
    }
    // Its own agent's and shared memories keep their trail; the unbound key sees everything.
    const own = await api.http.get('/v1/audit').set(key.auth).query({ memory_id: m.mine });
    expect(own.body.events.map((e: { action: string }) => e.action)).toEqual(['created']);
    const unbound = await api.http.get('/v1/audit').set(t.auth).query({ memory_id: m.theirs });
    expect(unbound.body.events.map((e: { action: string }) => e.action)).toEqual(['created', 'reinforced']);
  });

  it("shows none of another agent's events under the id of its deleted private memory, whoever holds the id now", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const gone = await storeMemory(api, t.auth, { agent_id: 'agent-b', content: 'The old vault code was 1234' });
    expect((await api.http.delete(`/v1/memories/${gone}`).set(t.auth)).status).toBe(204);
    const key = await boundKey(api, t, ['agent-a'], ['read', 'admin']);
    const at = new Date().toISOString();
    const mine = {
      type: 'memory',
      id: gone,
      agent_id: 'agent-a',
      content: 'A memory of agent A under a freed id',
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
    };
    const header = { type: 'header', format: 'agent-memory-export', version: 1, embedder: 'hash' };
    await api.http
      .post('/v1/import')
      .set(key.auth)
      .set('Content-Type', 'application/x-ndjson')
      .send(`${JSON.stringify(header)}\n${JSON.stringify(mine)}\n`);
    // Whatever the import made of the id, agent B's trail under it stays B's.
    const history = await api.http.get(`/v1/memories/${gone}/history`).set(key.auth);
    const audit = await api.http.get('/v1/audit').set(key.auth).query({ memory_id: gone });
    const records = await exported(api, key.auth);
    for (const events of [history.body.events ?? [], audit.body.events, records.filter((r) => r.type === 'audit')]) {
      expect(JSON.stringify(events)).not.toContain('agent-b');
    }
  });

  it('lists and revokes only keys bound to some of its agents, never an unbound key', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const admin = await boundKey(api, t, ['agent-a', 'agent-b'], ['read', 'write', 'admin']);
    const narrow = await createKey(api, admin.auth, { name: 'narrow', agent_ids: ['agent-b'] });
    const wider = await boundKey(api, t, ['agent-b', 'agent-c'], ['admin']);
    const unbound = await createKey(api, t.auth, { name: 'free', scopes: ['read', 'write', 'admin'] });
    const setup = (await api.http.get('/v1/keys/current').set(t.auth)).body.id as string;

    const listed = await api.http.get('/v1/keys').set(admin.auth);
    expect(listed.body.keys.map((k: { id: string }) => k.id)).toEqual([admin.id, narrow.id]);
    // Nor does the audit trail name the keys it cannot list.
    const keyEvents = await api.http.get('/v1/audit').set(admin.auth);
    expect(keyEvents.body.events.map((e: { changes: { key_id: string } }) => e.changes.key_id)).toEqual([
      admin.id,
      narrow.id,
    ]);

    const missing = await api.http.delete(`/v1/keys/${randomUUID()}`).set(admin.auth);
    for (const id of [setup, unbound.id, wider.id]) {
      const res = await api.http.delete(`/v1/keys/${id}`).set(admin.auth);
      expectProblem(res, 404, 'not_found');
      expect(res.body).toEqual(missing.body);
    }
    for (const auth of [t.auth, unbound.auth, wider.auth]) {
      expect((await api.http.get('/v1/keys/current').set(auth)).status).toBe(200);
    }
    expect((await api.http.delete(`/v1/keys/${narrow.id}`).set(admin.auth)).status).toBe(204);
    expectProblem(await api.http.get('/v1/keys/current').set(narrow.auth), 401, 'unauthorized');
  });

  it("keeps the tenant's last unbound admin key, whoever revokes it", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const setup = (await api.http.get('/v1/keys/current').set(t.auth)).body.id as string;
    const bound = await boundKey(api, t, ['agent-a'], ['admin']);
    // Another admin key exists, but it is bound: without the setup key nobody could make an unbound key.
    const last = await api.http.delete(`/v1/keys/${setup}`).set(t.auth);
    expectProblem(last, 409, 'conflict');
    expect(last.body.detail).toMatch(/not bound to agents/);
    expect((await api.http.get('/v1/keys/current').set(t.auth)).status).toBe(200);
    // With a second unbound admin key the first may go; then the second is the last one.
    const second = await createKey(api, t.auth, { name: 'second', scopes: ['admin'] });
    expect((await api.http.delete(`/v1/keys/${setup}`).set(second.auth)).status).toBe(204);
    expectProblem(await api.http.delete(`/v1/keys/${second.id}`).set(second.auth), 409, 'conflict');
    // Bound admin keys come and go as before.
    expect((await api.http.delete(`/v1/keys/${bound.id}`).set(second.auth)).status).toBe(204);
  });
});

describe(`keys bound to agents over MCP in-process on ${engine}`, () => {
  async function boundIdentity(api: TestApi, t: Tenant, agentIds: string[], agentId?: string) {
    const key = await boundKey(api, t, agentIds, ['read', 'write', 'admin']);
    const actor = await authenticate(api.core, key.apiKey);
    if (!actor) throw new Error('the bound key does not authenticate');
    return { actor, agentId };
  }

  it('acts as the one agent of its key when no agent is named, and refuses any other', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const m = await populate(api, t);
    const { client, close } = await inProcessClient(api.core, await boundIdentity(api, t, ['agent-a']));
    const stored = await ok(client, 'remember', { content: 'Lunch is at one' });
    expect(stored.agent_id).toBe('agent-a');
    const recalled = await ok(client, 'recall', { query: 'vault code deploy window lunch', limit: 100 });
    expect(recalled.results.map((r: { id: string }) => r.id).sort()).toEqual([m.mine, stored.id].sort());

    for (const [tool, args] of [
      ['remember', { content: 'Written as someone else', agent_id: 'agent-b' }],
      ['recall', { query: 'vault code', agent_id: 'agent-b' }],
      ['start_session', { agent_id: 'agent-b' }],
      ['write_canon', { content: 'Be polite', agent_id: 'agent-b' }],
    ] as const) {
      const result = await call(client, tool, args);
      expect(result.isError, tool).toBe(true);
      expect(text(result)).toMatch(/agent "agent-b"/);
      expect(text(result)).toMatch(/ask the user for a key with that scope/);
    }
    await close();
  });

  it("refuses the transport's agent id (X-Agent-Id, AGENT_ID) when the key may not act as it", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const { client, close } = await inProcessClient(api.core, await boundIdentity(api, t, ['agent-a'], 'agent-b'));
    const result = await call(client, 'remember', { content: 'Written as the transport says' });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/agent "agent-b"/);
    // An explicit argument naming its own agent still works.
    expect((await ok(client, 'remember', { content: 'Written as myself', agent_id: 'agent-a' })).agent_id).toBe(
      'agent-a',
    );
    await close();
  });

  it("needs an agent named when bound to several, and falls back to the client's name", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const identity = await boundIdentity(api, t, ['agent-a', 'claude-desktop']);
    const named = await inProcessClient(api.core, identity, 'claude-desktop');
    expect((await ok(named.client, 'remember', { content: 'Named by the client' })).agent_id).toBe('claude-desktop');
    await named.close();
    const unnamed = await inProcessClient(api.core, identity, 'some-other-client');
    const refused = await call(unnamed.client, 'remember', { content: 'Named by nobody it may act as' });
    expect(text(refused)).toMatch(/agent "some-other-client"/);
    await unnamed.close();
  });

  it("shows no other agent's private memory in the resources", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const m = await populate(api, t);
    const sessionId = await startSession(api, t.auth, { agent_id: 'agent-b', anchor_external_id: 'customer-1' });
    const inSession = await storeMemory(api, t.auth, {
      agent_id: 'agent-b',
      content: 'Calling about the vault code today',
      session_id: sessionId,
    });
    const { client, close } = await inProcessClient(api.core, await boundIdentity(api, t, ['agent-a']));
    const subject = await readJson(client, 'memory://subjects/customer-1');
    expect(subject.memories.map((x: { id: string }) => x.id)).toEqual([m.anchored]);
    const session = await readJson(client, `memory://sessions/${sessionId}`);
    expect(session.memories.map((x: { id: string }) => x.id)).toEqual([inSession]);
    await close();
  });
});

/** The app on a free loopback port, chosen by the kernel so parallel runs never collide. */
async function listen(api: TestApi): Promise<{ base: string; server: Server }> {
  const server = await new Promise<Server>((resolve, reject) => {
    const s = api.app.listen(0, '127.0.0.1');
    s.once('listening', () => resolve(s));
    s.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  return { base: `http://127.0.0.1:${port}`, server };
}

describe(`keys bound to agents over /mcp on ${engine}`, () => {
  it('refuses an X-Agent-Id the key may not act as with 403, and serves its own agent', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const key = await boundKey(api, t, ['agent-a']);
    const { base, server } = await listen(api);
    try {
      const initialize = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      };
      const refused = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          ...key.auth,
          'X-Agent-Id': 'agent-b',
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify(initialize),
      });
      expect(refused.status).toBe(403);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const problem = (await refused.json()) as { code: string; detail: string };
      expect(problem.code).toBe('insufficient_scope');
      expect(problem.detail).toContain('"agent-b"');

      for (const headers of [{}, { 'X-Agent-Id': 'agent-a' }] as Record<string, string>[]) {
        const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
          requestInit: { headers: { ...key.auth, ...headers } },
        });
        const client = new Client({ name: 'http-client', version: '1.0.0' });
        await client.connect(transport);
        expect((await ok(client, 'remember', { content: 'Over HTTP' })).agent_id).toBe('agent-a');
        const other = await call(client, 'recall', { query: 'anything', agent_id: 'agent-b' });
        expect(other.isError).toBe(true);
        expect(text(other)).toMatch(/agent "agent-b"/);
        await client.close();
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
