import type { ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engine, SETUP_TOKEN } from '../helpers/harness.js';
import { childEnv, exited, freePort, spawnCli, tempDir } from '../helpers/cli.js';
import { call, ok, readJson, text, type Json } from '../helpers/mcp.js';

/**
 * /mcp end to end: `agent-memory serve` as `npm start` runs it (on the current source), a tenant
 * and keys made through the REST API, and the SDK client over Streamable HTTP with those keys.
 */

const START_TIMEOUT_MS = 90_000;
const ALLOWED_HOST = 'memory.example.test';

let base: string;
let child: ChildProcess;
let stderr = '';
const data = tempDir('agent-memory-http-');

async function waitReady(): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`serve exited (${child.exitCode}); stderr:\n${stderr}`);
    try {
      if ((await fetch(`${base}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`serve did not become ready; stderr:\n${stderr}`);
}

async function post(path: string, body: unknown, headers: Record<string, string>): Promise<Json> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

interface Org {
  admin: string;
  key(scopes: string[]): Promise<string>;
}

async function newOrg(): Promise<Org> {
  const setup = await post('/v1/setup', { org_name: `org-${crypto.randomUUID()}` }, { 'X-Setup-Token': SETUP_TOKEN });
  const admin = setup.api_key as string;
  return {
    admin,
    key: async (scopes) =>
      (await post('/v1/keys', { name: scopes.join('-'), scopes }, { Authorization: `Bearer ${admin}` }))
        .api_key as string,
  };
}

const clients: Client[] = [];

/** Polls until `check` answers true (within 20 s). */
async function waitFor(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
  }
}

async function connect(key: string, headers: Record<string, string> = {}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}`, ...headers } },
  });
  const client = new Client({ name: 'http-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** A raw request, for headers fetch will not let us set (Host). */
function raw(
  method: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const url = new URL(`${base}/mcp`);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method, headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(JSON.stringify(body));
    req.end();
  });
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};
const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const database: Record<string, string> = process.env.TEST_DATABASE_URL
    ? { DATABASE_URL: process.env.TEST_DATABASE_URL }
    : { DATA_DIR: data.dir };
  child = spawnCli(
    ['serve'],
    childEnv({
      ...database,
      PORT: String(port),
      HOST: '127.0.0.1',
      SETUP_TOKEN,
      RATE_LIMIT_PER_MINUTE: '0',
      MCP_ALLOWED_HOSTS: ALLOWED_HOST,
    }),
  );
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout?.resume();
  await waitReady();
}, START_TIMEOUT_MS + 10_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  if (child && child.exitCode === null) {
    const exit = exited(child);
    child.kill('SIGTERM');
    await exit;
  }
  data.remove();
}, 30_000);

describe(`MCP over Streamable HTTP at /mcp (agent-memory serve, ${engine})`, () => {
  it('serves every tool with the scopes of the key, and composes subject, session and canon', async () => {
    const org = await newOrg();
    const admin = await connect(org.admin, { 'X-Agent-Id': 'http-agent' });
    const { tools } = await admin.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      ['correct', 'end_session', 'purge_subject', 'recall', 'remember', 'start_session', 'write_canon'].sort(),
    );
    expect((await admin.listPrompts()).prompts.map((p) => p.name).sort()).toEqual([
      'remember_conversation',
      'subject_context',
    ]);
    const canon = await ok(admin, 'write_canon', { content: 'Quote prices including tax' });
    const session = await ok(admin, 'start_session', { subject: 'acct-1' });
    expect(session.agent_id).toBe('http-agent');
    const durable = await ok(admin, 'remember', { content: 'Price list is the 2026 one', subject: 'acct-1' });
    const note = await ok(admin, 'remember', { content: 'Asked for a price quote today', session_id: session.id });
    const other = await ok(admin, 'remember', { content: 'Price list is the 2025 one', subject: 'acct-2' });
    expect(durable.agent_id).toBe('http-agent');

    const { results } = await ok(admin, 'recall', {
      query: 'price',
      subject: 'acct-1',
      session_id: session.id,
      limit: 20,
    });
    const ids = results.map((r: { id: string }) => r.id);
    expect(ids).toEqual(expect.arrayContaining([canon.id, durable.id, note.id]));
    expect(ids).not.toContain(other.id);
    expect(results[0].score_details).toBeDefined();

    expect((await ok(admin, 'end_session', { session_id: session.id })).status).toBe('ended');
    const purged = await ok(admin, 'purge_subject', { subject: 'acct-2', confirm: true });
    expect(purged.deleted.memories).toBe(1);

    // A read key recalls but cannot write canon or purge; a read-write key cannot either.
    for (const scopes of [['read'], ['read', 'write']]) {
      const limited = await connect(await org.key(scopes));
      const refusedCanon = await call(limited, 'write_canon', { content: 'Another policy' });
      expect(refusedCanon.isError).toBe(true);
      expect(text(refusedCanon)).toMatch(/^The write_canon tool needs the "admin" scope/);
      const refusedPurge = await call(limited, 'purge_subject', { subject: 'acct-1', confirm: true });
      expect(text(refusedPurge)).toMatch(/^The purge_subject tool needs the "admin" scope/);
      expect((await ok(limited, 'recall', { query: 'price', subject: 'acct-1' })).results.length).toBeGreaterThan(0);
    }
    const reader = await connect(await org.key(['read']));
    expect(text(await call(reader, 'remember', { content: 'x' }))).toMatch(/needs the "write" scope/);

    // Resources, in the key's tenant.
    const uris = (await admin.listResources()).resources.map((r) => r.uri);
    expect(uris).toEqual(
      expect.arrayContaining(['memory://canon', 'memory://subjects/acct-1', `memory://sessions/${session.id}`]),
    );
    expect(uris).not.toContain('memory://subjects/acct-2');
    const profile = await readJson(admin, 'memory://subjects/acct-1');
    expect(profile.memories.map((m: { id: string }) => m.id)).toEqual([durable.id]);
    expect((await readJson(admin, `memory://sessions/${session.id}`)).memories.map((m: Json) => m.id)).toEqual([
      note.id,
    ]);
    expect((await readJson(reader, 'memory://canon')).canon.map((c: Json) => c.id)).toEqual([canon.id]);

    // Another tenant's key sees none of it.
    const stranger = await connect((await newOrg()).admin);
    expect((await ok(stranger, 'recall', { query: 'price', subject: 'acct-1' })).results).toEqual([]);
    await expect(stranger.readResource({ uri: 'memory://subjects/acct-1' })).rejects.toThrow(/not found/i);
    await expect(stranger.readResource({ uri: `memory://sessions/${session.id}` })).rejects.toThrow(/not found/i);
    expect(text(await call(stranger, 'end_session', { session_id: session.id }))).toMatch(/^Session not found/);
  });

  it('answers 401 with WWW-Authenticate: Bearer without a valid key', async () => {
    for (const headers of [{}, { Authorization: `Bearer mk_${'0'.repeat(40)}` }] as Record<string, string>[]) {
      const res = await raw('POST', { ...JSON_HEADERS, ...headers }, INITIALIZE);
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`));
    await expect(new Client({ name: 'no-key', version: '0' }).connect(transport)).rejects.toThrow();
  });

  it('refuses Host headers other than localhost and MCP_ALLOWED_HOSTS (DNS rebinding)', async () => {
    const org = await newOrg();
    const auth = { Authorization: `Bearer ${org.admin}` };
    const port = new URL(base).port;
    const evil = await raw('POST', { ...JSON_HEADERS, ...auth, Host: `attacker.example:${port}` }, INITIALIZE);
    expect(evil.status).toBe(403);
    // The answer names the setting that would accept it, not the names it holds.
    const message: string = JSON.parse(evil.body).error.message;
    expect(message).toMatch(/^Invalid Host: attacker\.example\. .*add the name to MCP_ALLOWED_HOSTS/);
    expect(message).not.toContain(ALLOWED_HOST);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `${ALLOWED_HOST}:${port}`, ALLOWED_HOST]) {
      const res = await raw('POST', { ...JSON_HEADERS, ...auth, Host: host }, INITIALIZE);
      expect(res.status, host).toBe(200);
      expect(JSON.parse(res.body).result.serverInfo.name).toBe('agent-memory');
    }
  });

  it('answers requests without a session on their own, and GET and DELETE without one with 405', async () => {
    const org = await newOrg();
    const auth = { Authorization: `Bearer ${org.admin}` };
    for (const method of ['GET', 'DELETE']) {
      const res = await raw(method, { ...auth, Accept: 'text/event-stream' });
      expect(res.status, method).toBe(405);
    }
    // Without initialize, a tools/call still works: a request without a session stands alone.
    const alone = await raw(
      'POST',
      { ...JSON_HEADERS, ...auth, 'X-Agent-Id': 'stateless' },
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'remember', arguments: { content: 'Alone' } } },
    );
    expect(alone.status).toBe(200);
    expect(alone.headers['mcp-session-id']).toBeUndefined();
    expect(JSON.parse(alone.body).result.structuredContent.agent_id).toBe('stateless');
    const bad = await raw('POST', { ...JSON_HEADERS, ...auth, 'X-Agent-Id': 'x'.repeat(201) }, INITIALIZE);
    expect(bad.status).toBe(400);
  });

  it('opens a session on initialize, kept for its key only, until DELETE', async () => {
    const org = await newOrg();
    const auth = { Authorization: `Bearer ${org.admin}` };
    const init = await raw('POST', { ...JSON_HEADERS, ...auth, 'X-Agent-Id': 'keeper' }, INITIALIZE);
    expect(init.status).toBe(200);
    const id = init.headers['mcp-session-id'] as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(init.body).result.capabilities.resources.subscribe).toBe(true);
    const session = { ...JSON_HEADERS, ...auth, 'Mcp-Session-Id': id, 'Mcp-Protocol-Version': '2025-06-18' };
    const initialized = await raw('POST', session, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(initialized.status).toBe(202);
    // The session acts as the agent it was opened with, without the header.
    const stored = await raw('POST', session, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'remember', arguments: { content: 'In a session' } },
    });
    expect(JSON.parse(stored.body).result.structuredContent.agent_id).toBe('keeper');
    const otherAgent = await raw(
      'POST',
      { ...session, 'X-Agent-Id': 'someone-else' },
      { jsonrpc: '2.0', id: 3, method: 'ping' },
    );
    expect(otherAgent.status).toBe(400);
    // Another key, even of the same tenant, is told the session does not exist.
    const reader = await org.key(['read']);
    const stranger = await raw(
      'POST',
      { ...session, Authorization: `Bearer ${reader}` },
      { jsonrpc: '2.0', id: 4, method: 'ping' },
    );
    expect(stranger.status).toBe(404);
    // Every request authenticates: the session id alone is not a credential.
    const keyless = await raw(
      'POST',
      { ...JSON_HEADERS, 'Mcp-Session-Id': id },
      { jsonrpc: '2.0', id: 5, method: 'ping' },
    );
    expect(keyless.status).toBe(401);
    expect((await raw('DELETE', session)).status).toBe(200);
    const gone = await raw('POST', session, { jsonrpc: '2.0', id: 6, method: 'ping' });
    expect(gone.status).toBe(404);
    expect(JSON.parse(gone.body).error.message).toMatch(/^Session not found.*initialize again/);
  });

  it("sends a session's subscriber an update after a store for its subject, none for another subject", async () => {
    const org = await newOrg();
    const watcher = await connect(await org.key(['read']));
    expect(watcher.getServerCapabilities()?.resources?.subscribe).toBe(true);
    const writer = await connect(org.admin, { 'X-Agent-Id': 'writer' });
    const heard: string[] = [];
    const waiting: { uri: string; resolve: () => void }[] = [];
    watcher.setNotificationHandler(ResourceUpdatedNotificationSchema, ({ params }) => {
      heard.push(params.uri);
      for (const w of waiting.splice(0)) {
        if (w.uri === params.uri) w.resolve();
        else waiting.push(w);
      }
    });
    const next = (uri: string) => new Promise<void>((resolve) => waiting.push({ uri, resolve }));
    const watched = 'memory://subjects/http-watched';
    await watcher.subscribeResource({ uri: watched });
    await watcher.subscribeResource({ uri: 'memory://canon' });
    // The GET stream the client opened after initialize carries the notifications; it may open
    // just after connect returns, and a notice sent before it opens is not kept.
    await waitFor(async () => {
      const probe = next('memory://canon');
      await ok(writer, 'write_canon', { content: `Probe ${crypto.randomUUID()}` });
      return Promise.race([probe.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 500))]);
    });
    heard.length = 0;

    await ok(writer, 'remember', { content: 'Likes the other plan', subject: 'http-other' });
    const update = next(watched);
    await ok(writer, 'remember', { content: 'Likes the yearly plan', subject: 'http-watched' });
    await update;
    // Canon, written last, is the barrier: changes are heard in the order they commit.
    const barrier = next('memory://canon');
    await ok(writer, 'write_canon', { content: 'Answer in English' });
    await barrier;
    expect(heard).toEqual([watched, 'memory://canon']);
  });
});
