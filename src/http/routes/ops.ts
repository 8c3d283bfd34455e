import { sql } from 'kysely';
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { ProblemObject } from '../../schemas/objects.js';
import type { Metrics } from '../metrics.js';
import { route, type AnyRoute } from '../route.js';

export function opsRoutes(metrics: Metrics, openApi: () => unknown): AnyRoute[] {
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
        200: { description: 'Ready', schema: z.object({ status: z.literal('ready') }) },
        503: { description: 'The database does not answer', schema: ProblemObject },
      },
      handle: async ({ core }) => {
        try {
          await sql`SELECT 1`.execute(core.db);
        } catch {
          throw new AppError('unavailable', 'the database does not answer');
        }
        return { status: 200, body: { status: 'ready' } };
      },
    }),
    route({
      method: 'get',
      path: '/metrics',
      operationId: 'getMetrics',
      summary: 'Prometheus metrics',
      tag: 'operations',
      access: 'public',
      responses: { 200: { description: 'Prometheus text exposition format' } },
      handle: async ({ res }) => {
        res.type(metrics.registry.contentType);
        return { status: 200, body: await metrics.registry.metrics() };
      },
    }),
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
