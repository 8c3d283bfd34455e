import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ReadResourceResult, Resource } from '@modelcontextprotocol/sdk/types.js';
import type { Variables } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import { findAnchorIdByExternalId, getAnchor, listAnchors } from '../domain/subjects/anchors.js';
import { listCanon } from '../domain/records/canon.js';
import { anchorProfile } from '../domain/records/memories.js';
import { recentSessions, sessionWithMemories } from '../domain/subjects/session-memories.js';
import { requireScope, type ToolContext } from './context.js';
import { resourceError, resourceNotFound } from './errors.js';

/**
 * The memory resources of docs/api.md §7, read in the caller's tenant. Lists are capped: they help a
 * person pick something in a client, they are not a way to page through a tenant.
 */
const LIST_LIMIT = 100;
const PROFILE_LIMIT = 100;
const SESSION_MEMORY_LIMIT = 200;
const CANON_LIMIT = 200;
const JSON_TYPE = 'application/json';

export const subjectUri = (externalId: string): string => `memory://subjects/${encodeURIComponent(externalId)}`;
export const sessionUri = (id: string): string => `memory://sessions/${id}`;
export const CANON_URI = 'memory://canon';

const json = (uri: URL, body: unknown): ReadResourceResult => ({
  contents: [{ uri: uri.href, mimeType: JSON_TYPE, text: JSON.stringify(body, null, 2) }],
});

/** The one value a template variable holds, percent-decoded; undefined when it is not one valid value. */
function variable(variables: Variables, name: string): string | undefined {
  const raw = variables[name];
  if (typeof raw !== 'string') return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/** Runs a read for the caller, turning every failure into a JSON-RPC error without internals. */
async function reading(ctx: ToolContext, uri: URL, read: () => Promise<ReadResourceResult>) {
  try {
    return await read();
  } catch (error) {
    throw resourceError(ctx.core, uri.href, error);
  }
}

export function registerMemoryResources(server: McpServer, ctx: ToolContext): void {
  const { core, actor } = ctx;
  const canRead = actor.scopes.has('read');

  server.registerResource(
    'subject',
    new ResourceTemplate('memory://subjects/{subject}', {
      // A key without the read scope cannot read profiles, so it is offered none.
      list: async () => {
        if (!canRead) return { resources: [] };
        const page = await listAnchors(core.db, actor.tenantId, { limit: LIST_LIMIT });
        const resources: Resource[] = page.items.map((a) => ({
          uri: subjectUri(a.anchor_external_id),
          name: a.anchor_external_id,
          title: a.name ?? a.anchor_external_id,
          description: `Durable memories about ${a.anchor_external_id} (${a.memory_count} active)`,
          mimeType: JSON_TYPE,
        }));
        return { resources };
      },
    }),
    {
      title: 'Subject profile',
      description: "A subject's durable profile: its active anchored memories, highest confidence first",
      mimeType: JSON_TYPE,
    },
    (uri, variables) =>
      reading(ctx, uri, async () => {
        requireScope(actor, 'read', 'reading a subject');
        const externalId = variable(variables, 'subject');
        const anchorId = externalId ? await findAnchorIdByExternalId(core.db, actor.tenantId, externalId) : null;
        if (!anchorId) throw resourceNotFound(uri.href);
        const anchor = await getAnchor(core.db, actor.tenantId, anchorId);
        const profile = await anchorProfile(core, actor.tenantId, anchorId, { limit: PROFILE_LIMIT });
        return json(uri, { anchor, memories: profile.memories, truncated: profile.more });
      }),
  );

  server.registerResource(
    'canon',
    CANON_URI,
    {
      title: 'Canon',
      description: "The organisation's standing rules, part of every recall",
      mimeType: JSON_TYPE,
    },
    (uri) =>
      reading(ctx, uri, async () => {
        // Canon is readable with any valid key, as GET /v1/canon is.
        const page = await listCanon(core.db, actor.tenantId, { limit: CANON_LIMIT });
        return json(uri, { canon: page.items, truncated: page.nextCursor !== null });
      }),
  );

  server.registerResource(
    'session',
    new ResourceTemplate('memory://sessions/{id}', {
      list: async () => {
        if (!canRead) return { resources: [] };
        const sessions = await recentSessions(core.db, actor.tenantId, LIST_LIMIT);
        const resources: Resource[] = sessions.map((s) => ({
          uri: sessionUri(s.id),
          name: s.id,
          title: `${s.status} session of ${s.agent_id}${s.anchor_external_id ? ` about ${s.anchor_external_id}` : ''}`,
          description: `Started ${s.started_at}`,
          mimeType: JSON_TYPE,
        }));
        return { resources };
      },
    }),
    {
      title: 'Session',
      description: 'A session and the memories stored in it, oldest first',
      mimeType: JSON_TYPE,
    },
    (uri, variables) =>
      reading(ctx, uri, async () => {
        requireScope(actor, 'read', 'reading a session');
        const id = variable(variables, 'id');
        if (!id) throw resourceNotFound(uri.href);
        const found = await sessionWithMemories(core, actor.tenantId, id, { limit: SESSION_MEMORY_LIMIT });
        return json(uri, { session: found.session, memories: found.memories, truncated: found.more });
      }),
  );
}
