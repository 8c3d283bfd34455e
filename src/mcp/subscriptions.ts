import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { findAnchorIdByExternalId } from '../domain/subjects/anchors.js';
import type { Change } from '../domain/records/changes.js';
import { getSession } from '../domain/subjects/sessions.js';
import { isUuid } from '../domain/text.js';
import { requireScope, type ToolContext } from './context.js';
import { resourceError, resourceNotFound } from './errors.js';
import { CANON_URI } from './resources.js';

/** What a subscribed URI watches: a subject (by its anchor, once it has one), a session, or canon. */
type Watch =
  | { kind: 'subject'; externalId: string; anchorId: string | null }
  | { kind: 'session'; sessionId: string }
  | { kind: 'canon' };

const SUBJECT_PREFIX = 'memory://subjects/';
const SESSION_PREFIX = 'memory://sessions/';

/** The watch for a resource URI of resources.ts, once the caller is shown to be able to read it. */
async function watchFor(ctx: ToolContext, uri: string): Promise<Watch> {
  const { core, actor } = ctx;
  // Canon is readable with any valid key, as its resource is.
  if (uri === CANON_URI) return { kind: 'canon' };
  if (uri.startsWith(SUBJECT_PREFIX)) {
    requireScope(actor, 'read', 'subscribing to a subject');
    let externalId: string;
    try {
      externalId = decodeURIComponent(uri.slice(SUBJECT_PREFIX.length));
    } catch {
      throw resourceNotFound(uri);
    }
    if (externalId === '' || externalId.includes('/')) throw resourceNotFound(uri);
    // A subject with no memory yet may be watched: its first memory is the update.
    return {
      kind: 'subject',
      externalId,
      anchorId: await findAnchorIdByExternalId(core.db, actor.tenantId, externalId),
    };
  }
  if (uri.startsWith(SESSION_PREFIX)) {
    requireScope(actor, 'read', 'subscribing to a session');
    const sessionId = uri.slice(SESSION_PREFIX.length);
    if (!isUuid(sessionId)) throw resourceNotFound(uri);
    await getSession(core.db, actor.tenantId, sessionId);
    return { kind: 'session', sessionId };
  }
  throw resourceNotFound(uri);
}

/**
 * resources/subscribe for the memory resources: a subscribed client is sent
 * `notifications/resources/updated` with the URI (and nothing else) after each committed change to
 * what the resource shows. Changes are heard through the core's feed, in the caller's tenant only.
 * Only for transports that keep a connection to the client (stdio, in-process, an HTTP session with
 * its GET stream): a POST without a session has no stream to notify on, so it does not offer them.
 */
export function registerSubscriptions(server: McpServer, ctx: ToolContext): void {
  const watches = new Map<string, Watch>();
  let stop: (() => void) | undefined;

  const updated = (uri: string) => {
    if (!server.isConnected()) return release();
    server.server
      .sendResourceUpdated({ uri })
      .catch((error: unknown) => ctx.core.log.warn({ err: error }, 'mcp resource update not sent'));
  };

  const onChange = async (change: Change) => {
    for (const [uri, watch] of watches) {
      if (watch.kind === 'canon') {
        if (change.canon) updated(uri);
      } else if (watch.kind === 'session') {
        if (change.sessionId === watch.sessionId) updated(uri);
      } else if (change.anchorId !== null) {
        // A subject first watched before it existed learns its anchor from its first change.
        watch.anchorId ??= await findAnchorIdByExternalId(ctx.core.db, ctx.actor.tenantId, watch.externalId);
        if (watch.anchorId === change.anchorId && watches.get(uri) === watch) updated(uri);
      }
    }
  };

  function release() {
    stop?.();
    stop = undefined;
    watches.clear();
  }

  server.server.registerCapabilities({ resources: { subscribe: true } });
  server.server.setRequestHandler(SubscribeRequestSchema, async ({ params }) => {
    let watch: Watch;
    try {
      watch = await watchFor(ctx, params.uri);
    } catch (error) {
      throw resourceError(ctx.core, params.uri, error);
    }
    const feed = ctx.core.changes;
    if (!feed) throw resourceError(ctx.core, params.uri, new Error('this server hears no changes'));
    watches.set(params.uri, watch);
    stop ??= feed.subscribe(ctx.actor.tenantId, (change) => {
      onChange(change).catch((error: unknown) => ctx.core.log.warn({ err: error }, 'mcp subscription failed'));
    });
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, ({ params }) => {
    watches.delete(params.uri);
    if (watches.size === 0) release();
    return {};
  });
  const close = server.close.bind(server);
  server.close = async () => {
    release();
    await close();
  };
}
