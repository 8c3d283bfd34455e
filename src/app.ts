import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { mountConsole } from './console/serve.js';
import type { Actor, Core } from './domain/core.js';
import { AppError, outageError, toProblem, UnavailableError } from './errors.js';
import { authorize, checkSetupToken, keyCredential, setupCredential } from './access/auth.js';
import { AuthThrottle } from './access/auth-throttle.js';
import { clientAddress } from './access/client-address.js';
import { createMetrics, withMetrics, type Metrics } from './http/metrics.js';
import { docsRoute, mountDocsAssets } from './http/docs.js';
import { answerOtherMethods } from './http/methods.js';
import { buildOpenApi } from './http/openapi.js';
import { RateLimitedError, RateLimiter } from './access/rate-limit.js';
import type { AnyRoute } from './http/route.js';
import { anchorRoutes } from './http/routes/anchors.js';
import { auditRoutes } from './http/routes/audit.js';
import { webhookRoutes } from './http/routes/webhooks.js';
import { canonRoutes } from './http/routes/canon.js';
import { conversationRoutes } from './http/routes/conversations.js';
import { jobRoutes } from './http/routes/jobs.js';
import { keyRoutes } from './http/routes/keys.js';
import { memoryRoutes } from './http/routes/memories.js';
import { opsRoutes } from './http/routes/ops.js';
import { portabilityRoutes } from './http/routes/portability.js';
import { sessionRoutes } from './http/routes/sessions.js';
import { setupRoutes } from './http/routes/setup.js';
import { NO_QUERY, refuseAnyBody, refuseBody } from './http/validate.js';
import { parseInput } from './schemas/parse.js';
import { MCP_PATH, mountMcp } from './mcp/http.js';
import { McpSessions } from './mcp/sessions.js';
import { VERSION } from './version.js';
import type { Scope } from './vocabulary.js';

/** The routes of docs/api.md §5, in matching order (/v1/memories/recall before /v1/memories/{id}). */
export const API_ROUTES: readonly AnyRoute[] = [
  ...setupRoutes,
  ...keyRoutes,
  ...memoryRoutes,
  ...conversationRoutes,
  ...anchorRoutes,
  ...sessionRoutes,
  ...canonRoutes,
  ...auditRoutes,
  ...webhookRoutes,
  ...portabilityRoutes,
  ...jobRoutes,
];

/** An actor for routes without a key; handlers of such routes must not use it. */
const NO_ACTOR: Actor = Object.freeze({ tenantId: '', keyId: null, scopes: new Set<Scope>() });

const expressPath = (openApiPath: string): string => openApiPath.replace(/\{(\w+)\}/g, ':$1');

interface BodyParserError {
  type?: string;
  status?: number;
  expose?: boolean;
}

/** Failures of the JSON body parser (plain errors with a `type`) and of path decoding. */
function bodyParserProblem(error: unknown): AppError | undefined {
  // The router decodes path parameters and throws URIError on a bad percent-escape such as %ZZ.
  if (error instanceof URIError) return new AppError('invalid_request', 'the path is not valid percent-encoding');
  const type = (error as BodyParserError | null)?.type;
  switch (type) {
    case 'entity.parse.failed':
      return new AppError('invalid_request', 'the body is not valid JSON');
    case 'entity.too.large':
      return new AppError('payload_too_large', 'the body is larger than the limit');
    case 'encoding.unsupported':
      return new AppError('unsupported_media_type', 'send the body uncompressed, or with gzip, deflate or br');
    case 'charset.unsupported':
      return new AppError('unsupported_media_type', 'send the body as UTF-8 JSON');
    case 'request.aborted':
    case 'request.size.invalid':
      return new AppError('invalid_request', 'the body was cut short');
  }
  // A body that its Content-Encoding cannot decode (gzip, deflate, br): the zlib error, wrapped by
  // the parser in a 400 without a type.
  const parserError = error as BodyParserError | null;
  if (parserError?.status === 400 && parserError.expose === true) {
    return new AppError('invalid_request', 'the body is not valid data of its Content-Encoding');
  }
  return undefined;
}

export interface AppOptions {
  /** The metrics the app reports to; `serve` shares them with the sweeper and the metrics port. */
  metrics?: Metrics;
  /** The /mcp sessions; `serve` closes them at shutdown. Default: sessions of this app's own. */
  mcpSessions?: McpSessions;
}

export function createApp(base: Core, options: AppOptions = {}): express.Express {
  const app = express();
  app.disable('x-powered-by');
  // req.ip: X-Forwarded-For counts only when the peer is a proxy TRUST_PROXY names.
  app.set('trust proxy', base.config.trustProxy);
  const metrics = options.metrics ?? createMetrics(base.llm, base.reads);
  // Both doors below (REST and MCP over HTTP) run on the core that reports to these metrics.
  const core = withMetrics(base, metrics);
  const limiter = new RateLimiter(core.config.rateLimitPerMinute);
  const throttle = new AuthThrottle(core.config.httpLimits.authFailuresPerMinute);
  // The document lists the ops routes too; the closure reads it once it exists.
  const routes: AnyRoute[] = [...opsRoutes(metrics, core.config.metrics, () => openApi), docsRoute, ...API_ROUTES];
  const openApi = buildOpenApi(routes, VERSION);

  app.use((req: Request, res: Response, next: NextFunction) => {
    const requestId = req.get('x-request-id')?.slice(0, 100) || randomUUID();
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const routeLabel = (res.locals.route as string | undefined) ?? 'unmatched';
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.requests.inc({ method: req.method, route: routeLabel, status: String(res.statusCode) });
      metrics.duration.observe({ method: req.method, route: routeLabel }, seconds);
      // The query string can carry recall text, so only the route template is logged.
      core.log.info(
        {
          req_id: requestId,
          method: req.method,
          route: routeLabel,
          status: res.statusCode,
          ms: Math.round(seconds * 1000),
        },
        'request',
      );
    });
    next();
  });

  // Bodies are read only where a route reads one (every POST, and /mcp): a GET or DELETE with a
  // body is refused unread with 400, so only POST and PATCH routes can answer 413 and 415 (as the document says).
  const jsonBody = (limit: number) => [
    (req: Request, _res: Response, next: NextFunction) => {
      // req.is answers null when there is no body at all, false when there is one of another type.
      // An empty body (Content-Length: 0, as fetch and Python requests send a bare POST) is no body either.
      const empty = req.get('content-length') === '0';
      if (!empty && req.is(['application/json', 'application/*+json']) === false) {
        next(new AppError('unsupported_media_type', 'send the body as application/json'));
        return;
      }
      next();
    },
    express.json({ limit, type: ['application/json', 'application/*+json'] }),
  ];
  app.post(MCP_PATH, ...jsonBody(core.config.bodyLimitBytes));

  for (const spec of routes) {
    // Routes that stream their body (imports) read it themselves, unparsed.
    const reading = spec.rawBody
      ? []
      : spec.method === 'get' || spec.method === 'delete'
        ? [refuseAnyBody]
        : jsonBody(spec.bodyLimitBytes?.(core.config) ?? core.config.bodyLimitBytes);
    app[spec.method](expressPath(spec.path), ...reading, async (req: Request, res: Response) => {
      res.locals.route = spec.path;
      if (spec.rawBody && req.get('content-length') !== '0' && req.is(spec.rawBody.mediaTypes) === false) {
        throw new AppError('unsupported_media_type', `send the body as ${spec.rawBody.mediaTypes.join(' or ')}`);
      }
      let actor = NO_ACTOR;
      if (spec.access === 'setup') {
        limiter.take(`setup:${clientAddress(req)}`);
        await throttle.guard(req, setupCredential(req), () => checkSetupToken(core, req));
      } else if (spec.access !== 'public') {
        const access = spec.access;
        actor = await throttle.guard(req, keyCredential(req), () => authorize(core, req, access));
        limiter.take(`key:${actor.keyId ?? ''}`);
        // Before the write, not after: a recall racing it then reads the primary too (read-your-writes).
        if (spec.method !== 'get') core.reads?.wrote(actor);
      }
      const reply = await spec.handle({
        core,
        actor,
        params: spec.params ? (parseInput(spec.params, req.params, 'params') as unknown) : {},
        // A route without a query schema takes no parameter: an unknown one is refused, not ignored.
        query: parseInput(spec.query ?? NO_QUERY, req.query, 'query') as unknown,
        body: spec.body ? (parseInput(spec.body, req.body, 'body') as unknown) : refuseBody(req.body),
        req,
        res,
      });
      if (reply.streamed) return;
      res.status(reply.status);
      if (reply.body === undefined) res.end();
      else if (typeof reply.body === 'string') res.send(reply.body);
      else res.json(reply.body);
    });
  }

  mountMcp(app, core, limiter, throttle, options.mcpSessions ?? new McpSessions(core, core.config.mcpSessions));
  mountDocsAssets(app);
  answerOtherMethods(app, routes);
  mountConsole(app);

  app.use((req: Request) => {
    throw new AppError('not_found', `no route ${req.method} ${req.path}`);
  });

  // Express recognizes an error handler by its four parameters.
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const outage = outageError(error);
    const known = error instanceof AppError ? error : (bodyParserProblem(error) ?? outage);
    const appError = known ?? new AppError('internal', 'an internal error occurred; it has been logged');
    if (outage) core.log.warn({ req_id: res.locals.requestId as string, err: error }, 'database unavailable');
    else if (!known) {
      core.log.error(
        { req_id: res.locals.requestId as string, err: error, route: res.locals.route as string },
        'unhandled error',
      );
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    // Setup authenticates with its own header, not a bearer key.
    if (appError.code === 'unauthorized' && res.locals.route !== '/v1/setup')
      res.setHeader('WWW-Authenticate', 'Bearer');
    if (appError instanceof RateLimitedError || appError instanceof UnavailableError)
      res.setHeader('Retry-After', String(appError.retryAfterSeconds));
    const problem = toProblem(appError);
    res.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
  });

  return app;
}
