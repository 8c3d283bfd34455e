import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../src/app.js';
import { createAgentMemoryClient, ok, type AgentMemoryClient } from '../../src/client/index.js';
import { createHttpServer } from '../../src/http/server.js';
import { SETUP_TOKEN, testCore } from './harness.js';

/**
 * The service on a real port, over the worker's database (PGlite, or the Postgres of
 * TEST_DATABASE_URL): the adapters reach it as a user's application would, through the typed client.
 */
export interface Served {
  baseUrl: string;
  /** The setup key (read, write, admin) of a fresh tenant. */
  tenantKey(): Promise<string>;
  /** A client for a fresh tenant, with its setup key. */
  tenantClient(): Promise<AgentMemoryClient>;
  close(): Promise<void>;
}

export async function serveForAdapters(): Promise<Served> {
  const core = await testCore();
  const server: Server = createHttpServer(createApp(core), core.config.httpLimits).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const tenantKey = async () => {
    const setup = await ok(
      createAgentMemoryClient({ baseUrl }).POST('/v1/setup', {
        headers: { 'X-Setup-Token': SETUP_TOKEN },
        body: { org_name: `adapters-${Date.now()}-${Math.random()}` },
      }),
    );
    return setup.api_key;
  };
  return {
    baseUrl,
    tenantKey,
    tenantClient: async () => createAgentMemoryClient({ baseUrl, apiKey: await tenantKey() }),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
