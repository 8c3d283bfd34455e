import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '../../src/domain/tenancy/keys.js';
import { engine, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { startSession, storeMemory } from '../helpers/store-recall.js';
import { inProcessClient } from '../helpers/mcp.js';

/**
 * The MCP side of the walk in bound-keys-walk.test.ts: every tool the server lists and every
 * resource it lists or templates, through clients whose keys are bound to agent A (one per scope),
 * against agent B's private memories. A tool without a case fails the walk.
 */

const SCOPES = ['read', 'write', 'admin'] as const;

interface World {
  api: TestApi;
  t: Tenant;
  theirs: string;
  gone: string;
  sessionId: string;
  secrets: string[];
}

/** A tool's call with one of B's ids or none; with an id, an unknown id must be answered the same. */
interface ToolCase {
  args: (w: World, id: string) => Record<string, unknown>;
  ids?: (w: World) => string[];
}

const bPrivate = (w: World) => [w.theirs, w.gone];

const TOOLS: Record<string, ToolCase[]> = {
  remember: [
    { args: () => ({ content: 'Written as B by A', agent_id: 'agent-b' }) },
    { args: () => ({ content: 'The vault code is QX-4711-VAULT' }) },
  ],
  recall: [
    { args: () => ({ query: 'vault code safe', agent_id: 'agent-b' }) },
    { args: (w) => ({ query: 'vault code safe', session_id: w.sessionId, limit: 100 }) },
  ],
  correct: [{ ids: bPrivate, args: (_w, id) => ({ memory_id: id, content: 'Rewritten by A' }) }],
  start_session: [{ args: () => ({ agent_id: 'agent-b' }) }],
  end_session: [{ ids: bPrivate, args: (_w, id) => ({ session_id: id }) }],
  purge_subject: [{ ids: bPrivate, args: (_w, id) => ({ subject: id, confirm: true }) }],
  write_canon: [{ args: () => ({ content: 'Be brief', agent_id: 'agent-b' }) }],
};

/** A tool's answer or a resource's, as one string: what the client would show. */
async function toolText(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  try {
    return JSON.stringify(await client.callTool({ name, arguments: args }));
  } catch (error) {
    return `thrown: ${(error as Error).message}`;
  }
}

async function resourceText(client: Client, uri: string): Promise<string> {
  try {
    return JSON.stringify(await client.readResource({ uri }));
  } catch (error) {
    return `thrown: ${(error as Error).message}`;
  }
}

async function snapshotOfB(w: World): Promise<string> {
  const rows = await w.api.core.db
    .selectFrom('memories')
    .select(['id', 'content', 'status', 'reinforcement_count', 'updated_at'])
    .where('tenant_id', '=', w.t.tenantId)
    .where('agent_id', '=', 'agent-b')
    .where('binding', '=', 'private')
    .orderBy('id')
    .execute();
  return JSON.stringify(rows);
}

describe(`MCP with keys bound to agent A, against agent B's private memories, on ${engine}`, () => {
  let w: World;
  beforeAll(async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const theirs = await storeMemory(api, t.auth, { agent_id: 'agent-b', content: 'The vault code is QX-4711-VAULT' });
    const gone = await storeMemory(api, t.auth, { agent_id: 'agent-b', content: 'The safe code was QX-1234-GONE' });
    expect((await api.http.delete(`/v1/memories/${gone}`).set(t.auth)).status).toBe(204);
    const sessionId = await startSession(api, t.auth, { agent_id: 'agent-b', anchor_external_id: 'customer-1' });
    await storeMemory(api, t.auth, { agent_id: 'agent-b', content: 'Asked about an invoice', session_id: sessionId });
    w = { api, t, theirs, gone, sessionId, secrets: [theirs, gone, 'QX-1234'] };
  });

  async function boundClient(scope: (typeof SCOPES)[number]) {
    const res = await w.api.http
      .post('/v1/keys')
      .set(w.t.auth)
      .send({ name: `mcp-${scope}`, scopes: [scope], agent_ids: ['agent-a'] });
    const actor = await authenticate(w.api.core, res.body.api_key as string);
    if (!actor) throw new Error('the bound key does not authenticate');
    return inProcessClient(w.api.core, { actor, agentId: undefined });
  }

  it.each(SCOPES)('every tool and resource with a %s key shows and changes nothing of B', async (scope) => {
    const { client, close } = await boundClient(scope);
    const failures: string[] = [];
    try {
      const tools = (await client.listTools()).tools.map((tool) => tool.name);
      expect(tools.filter((name) => !(name in TOOLS))).toEqual([]);
      for (const [name, cases] of Object.entries(TOOLS)) {
        for (const kase of cases) {
          for (const id of kase.ids?.(w) ?? [undefined]) {
            const before = await snapshotOfB(w);
            const answer = await toolText(client, name, kase.args(w, id ?? ''));
            const shown = id ? answer.replaceAll(id, '{id}') : answer;
            // A's own store of B's words may echo them; B's ids and deleted words never.
            const leaked = w.secrets.filter((s) => shown.includes(s));
            if (leaked.length > 0) failures.push(`${name}: the answer holds ${leaked.join(', ')}`);
            if (id) {
              const unknown = randomUUID();
              const other = (await toolText(client, name, kase.args(w, unknown))).replaceAll(unknown, '{id}');
              if (other !== shown) failures.push(`${name}: B's id answers ${shown}, an unknown id ${other}`);
            }
            if ((await snapshotOfB(w)) !== before) failures.push(`${name}: B's private memories changed`);
          }
        }
      }
      const listed = (await client.listResources()).resources.map((r) => r.uri);
      for (const uri of [...listed, 'memory://canon', `memory://sessions/${w.sessionId}`]) {
        const answer = await resourceText(client, uri);
        const leaked = w.secrets.filter((s) => answer.includes(s));
        if (leaked.length > 0) failures.push(`${uri}: holds ${leaked.join(', ')}`);
      }
      for (const id of bPrivate(w)) {
        for (const template of ['memory://sessions/', 'memory://subjects/']) {
          const unknown = randomUUID();
          const mine = (await resourceText(client, `${template}${id}`)).replaceAll(id, '{id}');
          const other = (await resourceText(client, `${template}${unknown}`)).replaceAll(unknown, '{id}');
          if (mine !== other) failures.push(`${template}{B's id}: answers ${mine}, an unknown id ${other}`);
        }
      }
    } finally {
      await close();
    }
    expect(failures).toEqual([]);
  });
});
