import { sql } from 'kysely';
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { ProblemObject } from '../../schemas/objects.js';
import type { MetricsConfig } from '../../config.js';
import { scrape, type Metrics } from '../metrics.js';
import { route, type AnyRoute } from '../route.js';

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

export function opsRoutes(metrics: Metrics, config: MetricsConfig, openApi: () => unknown): AnyRoute[] {
  return [
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
        try {
          await sql`SELECT 1`.execute(core.db);
        } catch {
          throw new AppError('unavailable', 'the database does not answer');
        }
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
