import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { McpSessions } from '../../src/mcp/sessions.js';
import { engine, newTenant, testApi, testCore, type Tenant } from '../helpers/harness.js';

/** The bounds on /mcp sessions: the most a process keeps, idle ones closed, revoked keys' closed. */

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bounds', version: '0' } },
};
const PING = { jsonrpc: '2.0', id: 2, method: 'ping' };

const opened: { server: Server; sessions: McpSessions }[] = [];

async function serve(limits: { max: number; idleMs: number }) {
  const core = await testCore();
  const sessions = new McpSessions(core, limits);
  const server = createApp(core, { mcpSessions: sessions }).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  opened.push({ server, sessions });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  const post = (tenant: Tenant, body: unknown, sessionId?: string) =>
    fetch(url, {
      method: 'POST',
      headers: {
        ...tenant.auth,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        ...(sessionId ? { 'Mcp-Session-Id': sessionId, 'Mcp-Protocol-Version': '2025-06-18' } : {}),
      },
      body: JSON.stringify(body),
    });
  const open = async (tenant: Tenant): Promise<string> => {
    const res = await post(tenant, INITIALIZE);
    expect(res.status).toBe(200);
    const id = res.headers.get('mcp-session-id');
    if (!id) throw new Error('no session id');
    expect((await post(tenant, { jsonrpc: '2.0', method: 'notifications/initialized' }, id)).status).toBe(202);
    return id;
  };
  /** Opens the session's GET stream; aborting the controller closes it. */
  const stream = async (tenant: Tenant, sessionId: string) => {
    const controller = new AbortController();
    const res = await fetch(url, {
      headers: {
        ...tenant.auth,
        Accept: 'text/event-stream',
        'Mcp-Session-Id': sessionId,
        'Mcp-Protocol-Version': '2025-06-18',
      },
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    return controller;
  };
  return { sessions, post, open, stream };
}

afterEach(async () => {
  for (const { server, sessions } of opened.splice(0)) {
    await sessions.closeAll();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe(`MCP sessions over HTTP, bounded (${engine})`, () => {
  it('closes the session idle longest to make room, and refuses a new one when all hold a stream', async () => {
    const api = await testApi();
    const tenant = await newTenant(api);
    const { sessions, post, open, stream } = await serve({ max: 2, idleMs: 60_000 });
    const first = await open(tenant);
    const second = await open(tenant);
    expect((await post(tenant, PING, first)).status).toBe(200); // now the second is idle longest
    const third = await open(tenant);
    expect(sessions.size).toBe(2);
    expect((await post(tenant, PING, second)).status).toBe(404);
    expect((await post(tenant, PING, first)).status).toBe(200);

    const streams = [await stream(tenant, first), await stream(tenant, third)];
    const refused = await post(tenant, INITIALIZE);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(((await refused.json()) as { detail: string }).detail).toMatch(/MCP_MAX_SESSIONS/);
    // Requests without a session are still answered.
    expect((await post(tenant, PING)).status).toBe(200);
    for (const s of streams) s.abort();
  });

  it('closes a session idle past its time, but not one whose stream is open', async () => {
    const api = await testApi();
    const tenant = await newTenant(api);
    const { sessions, post, open, stream } = await serve({ max: 10, idleMs: 200 });
    const idle = await open(tenant);
    const waiting = await open(tenant);
    const controller = await stream(tenant, waiting);
    await new Promise((r) => setTimeout(r, 300));
    await sessions.sweep();
    expect((await post(tenant, PING, idle)).status).toBe(404);
    expect((await post(tenant, PING, waiting)).status).toBe(200);
    controller.abort();
  });

  it('closes the sessions of a revoked key, its open stream included', async () => {
    const api = await testApi();
    const tenant = await newTenant(api);
    const key = await api.http
      .post('/v1/keys')
      .set(tenant.auth)
      .send({ name: 'leaving', scopes: ['read'] });
    const leaving: Tenant = { ...tenant, auth: { Authorization: `Bearer ${key.body.api_key as string}` } };
    const { sessions, open, stream } = await serve({ max: 10, idleMs: 60_000 });
    const id = await open(leaving);
    await stream(leaving, id);
    expect(sessions.size).toBe(1);
    expect((await api.http.delete(`/v1/keys/${key.body.id as string}`).set(tenant.auth)).status).toBe(204);
    await sessions.sweep();
    expect(sessions.size).toBe(0);
  });
});
