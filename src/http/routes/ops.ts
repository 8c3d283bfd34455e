import { z } from 'zod';
import { databaseAnswers } from '../../domain/core.js';
import { AppError } from '../../errors.js';
import { ProblemObject } from '../../schemas/objects.js';
import type { MetricsConfig } from '../../config.js';
import { scrape, type Metrics } from '../metrics.js';
import { route, type AnyRoute } from '../route.js';
import { VERSION } from '../../version.js';

/** The scrape's answers; 401 only when METRICS_TOKEN guards it. */
function metricsResponses(config: MetricsConfig): Record<number, { description: string; schema?: z.ZodType }> {
  const responses: Record<number, { description: string; schema?: z.ZodType }> = {
    200: { description: 'Prometheus text exposition format' },
  };
  if (config.token !== undefined) {
    responses[401] = { description: 'Missing or wrong METRICS_TOKEN bearer', schema: ProblemObject };
  }
  return responses;
}

/** Where a newcomer goes from /: the same links as JSON (API clients) or a page (a browser). */
const FRONT_DOOR = {
  name: 'agent-memory',
  console: '/console/',
  docs: '/docs',
  openapi: '/v1/openapi.json',
  mcp: '/mcp',
  health: '/readyz',
} as const;

const FrontDoorObject = z.object({
  name: z.literal('agent-memory'),
  version: z.string(),
  console: z.string().describe('The console, for people: what agents remember, and the keys'),
  docs: z.string().describe('The API reference, rendered'),
  openapi: z.string().describe('The OpenAPI document'),
  mcp: z.string().describe('MCP over Streamable HTTP'),
  health: z.string().describe('Readiness'),
});

const frontDoorPage = (version: string): string => `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>agent-memory</title>
    <link rel="icon" type="image/svg+xml" href="/console/favicon.svg" />
  </head>
  <body>
    <h1>agent-memory ${version}</h1>
    <p>A memory service for LLM agents. This server answers the REST API under <code>/v1</code> and MCP at <code>/mcp</code>.</p>
    <ul>
      <li><a href="${FRONT_DOOR.console}">Console</a>: what agents remember, sessions, canon, the audit trail and keys</li>
      <li><a href="${FRONT_DOOR.docs}">API reference</a></li>
      <li><a href="${FRONT_DOOR.openapi}">OpenAPI document</a></li>
    </ul>
  </body>
</html>
`;

export function opsRoutes(metrics: Metrics, config: MetricsConfig, openApi: () => unknown): AnyRoute[] {
  return [
    route({
      method: 'get',
      path: '/',
      operationId: 'getFrontDoor',
      summary: 'Where to go from here: the console, the API reference, the OpenAPI document',
      tag: 'operations',
      access: 'public',
      responses: {
        200: {
          description: 'The links as JSON; a browser (Accept: text/html) gets them as a page',
          schema: FrontDoorObject,
        },
      },
      handle: ({ req, res }) => {
        res.vary('Accept');
        if (req.accepts(['json', 'html']) === 'html') {
          res.type('html');
          res.setHeader('Content-Security-Policy', "default-src 'none'; img-src 'self'; base-uri 'none'");
          return Promise.resolve({ status: 200, body: frontDoorPage(VERSION) });
        }
        return Promise.resolve({ status: 200, body: { ...FRONT_DOOR, version: VERSION } });
      },
    }),
    route({
      method: 'get',
      path: '/healthz',
      operationId: 'getHealth',
      summary: 'Liveness: the process runs',
      tag: 'operations',
      access: 'public',
      responses: { 200: { description: 'Alive', schema: z.object({ status: z.literal('ok') }) } },
      handle: () => Promise.resolve({ status: 200, body: { status: 'ok' } }),
    }),
    route({
      method: 'get',
      path: '/readyz',
      operationId: 'getReadiness',
      summary: 'Readiness: the database answers',
      tag: 'operations',
      access: 'public',
      responses: {
        200: {
          description:
            'Ready. With read replicas (DATABASE_READ_URL), how many answer: recall reads the primary while none does',
          schema: z.object({
            status: z.literal('ready'),
            read_replicas: z.object({ configured: z.int(), answering: z.int() }).optional(),
          }),
        },
        503: { description: 'The database does not answer', schema: ProblemObject },
      },
      handle: async ({ core }) => {
        if (!(await databaseAnswers(core))) throw new AppError('unavailable', 'the database does not answer');
        // A replica that does not answer leaves the process ready: its recalls read the primary.
        if (!core.reads) return { status: 200, body: { status: 'ready' } };
        const replicas = { configured: core.reads.replicas.length, answering: await core.reads.answering() };
        return { status: 200, body: { status: 'ready', read_replicas: replicas } };
      },
    }),
    // With METRICS_PORT, /metrics is served there only (src/cli/main.ts), not beside the API.
    ...(config.port === undefined
      ? [
          route({
            method: 'get',
            path: '/metrics',
            operationId: 'getMetrics',
            summary: 'Prometheus metrics: HTTP requests and the core (recall, store, embedder, model, sweeper)',
            tag: 'operations',
            access: 'public',
            responses: metricsResponses(config),
            handle: async ({ req, res }) => ({ status: 200, body: await scrape(req, res, metrics, config) }),
          }),
        ]
      : []),
    route({
      method: 'get',
      path: '/v1/openapi.json',
      operationId: 'getOpenApi',
      summary: 'This document',
      tag: 'operations',
      access: 'public',
      responses: { 200: { description: 'OpenAPI 3.1' } },
      handle: () => Promise.resolve({ status: 200, body: openApi() }),
    }),
  ];
}
