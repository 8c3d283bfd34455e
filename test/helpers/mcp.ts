import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Core } from '../../src/domain/core.js';
import { authenticate } from '../../src/domain/tenancy/keys.js';
import type { McpIdentity } from '../../src/mcp/context.js';
import { createMcpServer } from '../../src/mcp/server.js';
import { newKey, type Tenant, type TestApi } from './harness.js';
import type { Scope } from '../../src/vocabulary.js';

/** Parsed JSON of a tool result or resource: the tests assert on its shape. */
export type Json = ReturnType<typeof JSON.parse>;

export interface Connected {
  client: Client;
  close: () => Promise<void>;
}

/** An SDK client talking to createMcpServer in this process, over a linked in-memory pair. */
export async function inProcessClient(
  core: Core,
  identity: McpIdentity,
  clientName = 'test-client',
): Promise<Connected> {
  const server = createMcpServer(core, identity);
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: clientName, version: '1.0.0' });
  await client.connect(clientTransport);
  return {
    client,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

/** The actor behind a key of the tenant with these scopes, resolved the way /mcp resolves it. */
export async function identityWithScopes(
  api: TestApi,
  tenant: Tenant,
  scopes: Scope[],
  agentId?: string,
): Promise<McpIdentity> {
  const key = await newKey(api, tenant, scopes);
  const actor = await authenticate(api.core, key.auth.Authorization.replace(/^Bearer /, ''));
  if (!actor) throw new Error('the new key does not authenticate');
  return { actor, agentId };
}

export interface ToolResult {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, Json>;
}

export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

/** A tool call that must succeed; returns its structured content. */
export async function ok(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Json> {
  const result = await call(client, name, args);
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  if (!result.structuredContent) throw new Error(`${name} returned no structuredContent`);
  return result.structuredContent;
}

export const text = (result: ToolResult): string => result.content.map((c) => c.text ?? '').join('\n');

/** A resource read, parsed from its one JSON content. */
export async function readJson(client: Client, uri: string): Promise<Json> {
  const result = await client.readResource({ uri });
  const [first] = result.contents;
  if (!first || !('text' in first)) throw new Error(`no text content at ${uri}`);
  return JSON.parse(first.text);
}
