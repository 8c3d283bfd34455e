import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Express, NextFunction, Request, Response } from 'express';
import { actAs } from '../domain/tenancy/agent-binding.js';
import type { Actor, Core } from '../domain/core.js';
import { AppError } from '../errors.js';
import { authorize, keyCredential } from '../access/auth.js';
import type { AuthThrottle } from '../access/auth-throttle.js';
import type { RateLimiter } from '../access/rate-limit.js';
import { agentId as agentIdField } from '../schemas/fields.js';
import { createMcpServer } from './server.js';
import type { McpSessions } from './sessions.js';

export const MCP_PATH = '/mcp';

/** Always accepted: a browser page can only reach these through DNS rebinding, which this stops. */
const LOCAL_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

function agentIdHeader(req: Request): string | undefined {
  const raw = req.get('x-agent-id');
  if (raw === undefined) return undefined;
  const parsed = agentIdField.safeParse(raw);
  if (!parsed.success) {
    throw new AppError('invalid_request', 'the X-Agent-Id header must be 1 to 200 characters', [
      { path: 'X-Agent-Id', message: 'must be 1 to 200 characters' },
    ]);
  }
  return parsed.data;
}

const forbidden = (res: Response, message: string): void => {
  res.status(403).json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
};

/**
 * DNS rebinding protection, as the SDK's hostHeaderValidation does it (the Host header's name,
 * any port), with answers that say which setting accepts another name: a server reached by a name
 * of its own (behind a proxy, in a container) is refused until that name is configured.
 */
function hostValidation(allowed: readonly string[]) {
  const accepted = new Set(allowed.map((h) => h.toLowerCase()));
  // The configured names are not listed: they are not the business of whoever sent a wrong Host.
  const how =
    `/mcp accepts ${LOCAL_HOSTS.join(', ')} and the names in MCP_ALLOWED_HOSTS (DNS rebinding protection); ` +
    'to reach it by this name, add the name to MCP_ALLOWED_HOSTS (comma-separated, without port).';
  return (req: Request, res: Response, next: NextFunction): void => {
    const header = req.headers.host;
    if (!header) return forbidden(res, `Missing Host header. ${how}`);
    let hostname: string;
    try {
      hostname = new URL(`http://${header}`).hostname;
    } catch {
      return forbidden(res, `Invalid Host header: ${header}. ${how}`);
    }
    if (!accepted.has(hostname)) return forbidden(res, `Invalid Host: ${hostname}. ${how}`);
    next();
  };
}

const label = (_req: Request, res: Response, next: NextFunction): void => {
  res.locals.route = MCP_PATH;
  next();
};

const jsonRpcError = (res: Response, status: number, message: string, code = -32000): void => {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
};

/** GET and DELETE without a session: there is no stream outside a session, nor one to delete. */
const methodNotAllowed = (res: Response): void => {
  res.set('Allow', 'POST');
  jsonRpcError(
    res,
    405,
    'Method not allowed without a session: send JSON-RPC with POST, or initialize to get an Mcp-Session-Id.',
  );
};

const isInitialize = (body: unknown): boolean =>
  Array.isArray(body) ? body.some((m) => isInitializeRequest(m)) : isInitializeRequest(body);

/**
 * MCP over Streamable HTTP at /mcp. Every request authenticates its bearer key (the REST keys; each
 * tool then checks its scope); failures before the transport (401, 429, 400) are the REST problem
 * documents of app.ts. An `initialize` opens a session (Mcp-Session-Id), on which the client may
 * open a GET stream and subscribe to resources; a POST without a session id and without
 * `initialize` stands alone, as before sessions: a server for that request only, answered with JSON.
 */
export function mountMcp(
  app: Express,
  core: Core,
  limiter: RateLimiter,
  throttle: AuthThrottle,
  sessions: McpSessions,
): void {
  const hosts = hostValidation([...LOCAL_HOSTS, ...core.config.mcpAllowedHosts]);

  /** The caller and its X-Agent-Id, checked as REST checks them; `cost` counts against the key's limit. */
  const caller = async (req: Request, cost: number) => {
    const actor = await throttle.guard(req, keyCredential(req), () => authorize(core, req, 'any'));
    limiter.take(`key:${actor.keyId ?? ''}`, cost);
    const agentId = agentIdHeader(req);
    // A header naming an agent the key may not act as is refused up front, as REST refuses it.
    if (agentId !== undefined) actAs(actor, agentId);
    return { actor, agentId };
  };

  /** The session a request names, if this key opened it here; otherwise the answer is sent (404). */
  const sessionOf = (req: Request, res: Response, actor: Actor, agentId: string | undefined) => {
    const id = req.get('mcp-session-id') ?? '';
    const session = sessions.find(id, actor);
    if (!session) {
      // Also the answer for another key's session: whether an id exists is not that key's business.
      jsonRpcError(
        res,
        404,
        'Session not found: it was closed (idle, or the server restarted) or opened on another replica; ' +
          'initialize again for a new one.',
        -32001,
      );
      return undefined;
    }
    if (agentId !== undefined && agentId !== session.agentId) {
      throw new AppError(
        'invalid_request',
        'the X-Agent-Id header differs from the one the session was opened with; initialize a new session to act as another agent',
        [{ path: 'X-Agent-Id', message: 'must be the one given at initialize' }],
      );
    }
    session.lastSeen = performance.now();
    return session;
  };

  app.post(MCP_PATH, label, hosts, async (req: Request, res: Response) => {
    // A JSON-RPC batch carries many calls in one request: each counts against the key's limit.
    const { actor, agentId } = await caller(req, Array.isArray(req.body) ? Math.max(1, req.body.length) : 1);
    if (req.get('mcp-session-id') !== undefined) {
      const session = sessionOf(req, res, actor, agentId);
      if (session) await session.transport.handleRequest(req, res, req.body);
      return;
    }
    if (isInitialize(req.body)) {
      const session = sessions.open(actor, agentId);
      await session.server.connect(session.transport);
      await session.transport.handleRequest(req, res, req.body);
      // An initialize the transport refused (malformed) leaves a session that was never registered.
      if (session.transport.sessionId === undefined) void sessions.close(session, 'initialize refused');
      return;
    }
    // Without a session: a server for this request only, which no stream outlives.
    const server = createMcpServer(core, { actor, agentId }, { subscriptions: false });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });

  app.get(MCP_PATH, label, hosts, async (req: Request, res: Response) => {
    const { actor, agentId } = await caller(req, 1);
    if (req.get('mcp-session-id') === undefined) return methodNotAllowed(res);
    const session = sessionOf(req, res, actor, agentId);
    if (!session) return;
    // The stream is what the session's notifications travel on: while it is open, the session is not idle.
    session.streams += 1;
    res.on('close', () => {
      session.streams -= 1;
      session.lastSeen = performance.now();
    });
    await session.transport.handleRequest(req, res);
  });

  app.delete(MCP_PATH, label, hosts, async (req: Request, res: Response) => {
    const { actor, agentId } = await caller(req, 1);
    if (req.get('mcp-session-id') === undefined) return methodNotAllowed(res);
    const session = sessionOf(req, res, actor, agentId);
    if (!session) return;
    await session.transport.handleRequest(req, res);
    await sessions.close(session, 'deleted by the client');
  });
}
