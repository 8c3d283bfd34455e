import { z } from 'zod';
import type { AnyRoute } from './route.js';

type JsonSchema = Record<string, unknown>;

function toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
  delete json.$schema;
  return json;
}

/** Query and path parameters from the properties of an object schema. */
function parameters(schema: z.ZodType | undefined, location: 'query' | 'path'): JsonSchema[] {
  if (!schema) return [];
  const json = toSchema(schema, 'input');
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, prop]) => ({
    name,
    in: location,
    required: location === 'path' || required.has(name),
    ...(typeof prop.description === 'string' ? { description: prop.description } : {}),
    schema: prop,
  }));
}

const SECURITY: Record<string, JsonSchema[]> = {
  public: [],
  setup: [{ setupToken: [] }],
};

/** OpenAPI 3.1 generated from the same route table and zod schemas that validate requests. */
export function buildOpenApi(routes: readonly AnyRoute[], version: string): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const r of routes) {
    const responses: Record<string, JsonSchema> = {};
    for (const [status, res] of Object.entries(r.responses)) {
      responses[status] = {
        description: res.description,
        ...(res.schema
          ? {
              content: {
                [status.startsWith('2') ? 'application/json' : 'application/problem+json']: {
                  schema: toSchema(res.schema, 'output'),
                },
              },
            }
          : {}),
      };
    }
    if (r.access !== 'public') {
      responses['401'] ??= { description: 'Missing or invalid credentials' };
      if (r.access !== 'setup' && r.access !== 'any') responses['403'] ??= { description: 'Key lacks the scope' };
      responses['429'] ??= {
        description:
          'Rate limited: the key used its allowance, or the address failed authentication too often; see Retry-After',
      };
      responses['503'] ??= { description: 'The database is unavailable; retry after Retry-After seconds' };
    }
    if (r.body || r.query) responses['400'] ??= { description: 'Invalid request' };
    (paths[r.path] ??= {})[r.method] = {
      summary: r.summary,
      tags: [r.tag],
      ...(r.access === 'public' || r.access === 'setup' || r.access === 'any'
        ? {}
        : { description: `Needs a key with the \`${r.access}\` scope.` }),
      security: SECURITY[r.access] ?? [{ bearer: [] }],
      parameters: [...parameters(r.params, 'path'), ...parameters(r.query, 'query')],
      ...(r.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: toSchema(r.body, 'input') } } } }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'agent-memory',
      version,
      description:
        'A memory service for LLM agents. Errors are RFC 9457 application/problem+json, including those the ' +
        'server answers before a route is reached: 400 for malformed HTTP, 408 for a request not received in ' +
        'time, 431 for oversized headers.',
    },
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An mk_ or rk_ API key' },
        setupToken: { type: 'apiKey', in: 'header', name: 'X-Setup-Token' },
      },
    },
    paths,
  };
}
