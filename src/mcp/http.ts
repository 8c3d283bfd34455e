import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Express, NextFunction, Request, Response } from 'express';
import { actAs } from '../domain/agent-binding.js';
import type { Core } from '../domain/core.js';
import { AppError } from '../errors.js';
import { authorize, keyCredential } from '../access/auth.js';
import type { AuthThrottle } from '../access/auth-throttle.js';
import type { RateLimiter } from '../access/rate-limit.js';
import { agentId as agentIdField } from '../schemas/fields.js';
import { createMcpServer } from './server.js';

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

/** Stateless mode keeps no stream to resume or session to delete, as in the SDK's examples. */
const methodNotAllowed = (_req: Request, res: Response): void => {
  res
    .status(405)
    .set('Allow', 'POST')
    .json({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Method not allowed: send JSON-RPC with POST.' },
      id: null,
    });
};

/**
 * MCP over Streamable HTTP at /mcp, stateless: each POST authenticates its bearer key (the REST
 * keys; each tool then checks its scope), builds a server for that caller and answers with JSON.
 * Failures before the transport (401, 429, 400) are the REST problem documents of app.ts.
 */
export function mountMcp(app: Express, core: Core, limiter: RateLimiter, throttle: AuthThrottle): void {
  const hosts = hostValidation([...LOCAL_HOSTS, ...core.config.mcpAllowedHosts]);

  app.post(MCP_PATH, label, hosts, async (req: Request, res: Response) => {
    const actor = await throttle.guard(req, keyCredential(req), () => authorize(core, req, 'any'));
    // A JSON-RPC batch carries many calls in one request: each counts against the key's limit.
    limiter.take(`key:${actor.keyId ?? ''}`, Array.isArray(req.body) ? Math.max(1, req.body.length) : 1);
    const header = agentIdHeader(req);
    // A header naming an agent the key may not act as is refused up front, as REST refuses it.
    if (header !== undefined) actAs(actor, header);
    // Stateless: no stream outlives the request, so there is nothing a subscription could notify on.
    const server = createMcpServer(core, { actor, agentId: header }, { subscriptions: false });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  app.get(MCP_PATH, label, hosts, methodNotAllowed);
  app.delete(MCP_PATH, label, hosts, methodNotAllowed);
}
