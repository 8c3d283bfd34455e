import { z } from 'zod';
import { COMPONENTS } from '../schemas/components.js';
import { ProblemObject } from '../schemas/objects.js';
import type { AnyRoute } from './route.js';

type JsonSchema = Record<string, unknown>;

const COMPONENT_REF = '#/components/schemas/';
const PROBLEM_REF = { $ref: `${COMPONENT_REF}Problem` };

/**
 * Renders zod schemas as JSON Schema, naming the schemas of src/schemas/components.ts: zod puts them
 * in $defs of each rendering, from where they move into one components.schemas, and every $ref is
 * rewritten to point there.
 */
class SchemaRenderer {
  readonly components: Record<string, JsonSchema> = {};
  private readonly serialized = new Map<string, string>();

  render(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
    const json = z.toJSONSchema(schema, {
      target: 'draft-2020-12',
      io,
      unrepresentable: 'any',
      metadata: COMPONENTS,
    }) as JsonSchema;
    delete json.$schema;
    const defs = (json.$defs ?? {}) as Record<string, JsonSchema>;
    delete json.$defs;
    for (const [id, def] of Object.entries(defs)) this.add(id, rewriteRefs(def) as JsonSchema);
    return rewriteRefs(json) as JsonSchema;
  }

  private add(id: string, schema: JsonSchema): void {
    const text = JSON.stringify(schema);
    const earlier = this.serialized.get(id);
    // One name, one shape: a request and an answer schema under one name would mislead clients.
    if (earlier !== undefined && earlier !== text) throw new Error(`component ${id} renders two different ways`);
    this.serialized.set(id, text);
    this.components[id] = schema;
  }
}

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => [
      key,
      key === '$ref' && typeof child === 'string' ? child.replace(/^#\/\$defs\//, COMPONENT_REF) : rewriteRefs(child),
    ]),
  );
}

/** Query and path parameters from the properties of an object schema. */
function parameters(renderer: SchemaRenderer, schema: z.ZodType | undefined, location: 'query' | 'path') {
  if (!schema) return [];
  const json = renderer.render(schema, 'input');
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

/**
 * The statuses that every route of a kind can answer, besides those its table entry names: what
 * app.ts and src/access answer before or around the handler. A test walks the routes and provokes
 * each (test/http/openapi.test.ts).
 */
export function commonResponses(r: AnyRoute): Record<number, string> {
  const out: Record<number, string> = {
    // Every route validates its query: one it does not take is refused.
    400:
      r.body || r.rawBody
        ? 'Invalid body or query: errors[] names each field'
        : 'Invalid query: errors[] names each field',
    500: 'Internal error; the body carries no internals, the server logs them',
  };
  if (r.method !== 'get' && r.method !== 'delete') {
    out[413] = 'The body is larger than the limit';
    out[415] = 'The body is not JSON, or in an encoding other than gzip, deflate, br';
  }
  if (r.access === 'setup') {
    out[401] = 'Missing or wrong X-Setup-Token';
    out[403] = 'setup_disabled: no setup token is configured';
  } else if (r.access !== 'public') {
    out[401] = 'Missing, unknown or revoked key';
    if (r.access !== 'any') out[403] = 'insufficient_scope: the key lacks the scope';
  }
  if (r.access !== 'public') {
    out[429] =
      'Rate limited: the key used its allowance, or its client address failed authentication too often (with this key prefix, or at all); see Retry-After';
    out[503] = 'The database is unavailable; retry after Retry-After seconds';
  }
  return out;
}

function responsesOf(renderer: SchemaRenderer, r: AnyRoute): Record<string, JsonSchema> {
  const responses: Record<string, JsonSchema> = {};
  const declared = Object.entries(r.responses).map(
    ([status, res]) => [status, res.description, res.schema, res.mediaType] as const,
  );
  const common = Object.entries(commonResponses(r)).map(([status, description]) => [status, description] as const);
  for (const [status, description, schema, mediaType] of [...declared, ...common]) {
    if (responses[status]) continue;
    const error = !status.startsWith('2');
    const body = error ? PROBLEM_REF : schema ? renderer.render(schema, 'output') : undefined;
    // Errors are problem documents whatever the table says: toProblem writes every one.
    if (error && schema && schema !== ProblemObject) throw new Error(`${r.operationId} ${status}: errors are Problem`);
    responses[status] = {
      description,
      ...(body
        ? { content: { [error ? 'application/problem+json' : (mediaType ?? 'application/json')]: { schema: body } } }
        : {}),
      ...(status === '429' || (status === '503' && r.access !== 'public')
        ? { headers: { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } } }
        : {}),
    };
  }
  return Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
}

/** OpenAPI 3.1 generated from the same route table and zod schemas that validate requests. */
export function buildOpenApi(routes: readonly AnyRoute[], version: string): JsonSchema {
  const renderer = new SchemaRenderer();
  renderer.render(ProblemObject, 'output');
  const paths: Record<string, Record<string, JsonSchema>> = {};
  const operationIds = new Set<string>();
  for (const r of routes) {
    if (operationIds.has(r.operationId)) throw new Error(`operationId ${r.operationId} is used twice`);
    operationIds.add(r.operationId);
    (paths[r.path] ??= {})[r.method] = {
      operationId: r.operationId,
      summary: r.summary,
      tags: [r.tag],
      ...(r.access === 'public' || r.access === 'setup' || r.access === 'any'
        ? {}
        : { description: `Needs a key with the \`${r.access}\` scope.` }),
      security: SECURITY[r.access] ?? [{ bearer: [] }],
      parameters: [...parameters(renderer, r.params, 'path'), ...parameters(renderer, r.query, 'query')],
      ...(r.body
        ? {
            requestBody: {
              required: true,
              content: { 'application/json': { schema: renderer.render(r.body, 'input') } },
            },
          }
        : {}),
      ...(r.rawBody
        ? {
            requestBody: {
              required: true,
              description: r.rawBody.description,
              content: Object.fromEntries(r.rawBody.mediaTypes.map((t) => [t, { schema: { type: 'string' } }])),
            },
          }
        : {}),
      responses: responsesOf(renderer, r),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'agent-memory',
      version,
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      description:
        'A memory service for LLM agents. Errors are RFC 9457 application/problem+json (the Problem schema), ' +
        'including those the server answers before a route is reached: 400 for malformed HTTP, 404 for an ' +
        'unknown path, 405 with Allow for a method a known path does not answer, 408 for a request not ' +
        'received in time, 431 for oversized headers. Unknown body fields and query parameters are refused ' +
        'with 400.',
    },
    // Relative: the document is served by the server it describes, wherever that is reached.
    servers: [{ url: '/', description: 'The server that serves this document' }],
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    components: {
      schemas: Object.fromEntries(Object.entries(renderer.components).sort(([a], [b]) => a.localeCompare(b))),
      responses: {
        MethodNotAllowed: {
          description: 'A known path reached with a method it does not answer; Allow lists the ones it does',
          headers: { Allow: { schema: { type: 'string' }, description: 'The methods of the path, e.g. GET, HEAD' } },
          content: { 'application/problem+json': { schema: PROBLEM_REF } },
        },
        NotFound: {
          description: 'No route at this path',
          content: { 'application/problem+json': { schema: PROBLEM_REF } },
        },
      },
      headers: {
        RetryAfter: { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 1 } },
      },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An mk_ or rk_ API key' },
        setupToken: { type: 'apiKey', in: 'header', name: 'X-Setup-Token' },
      },
    },
    paths,
  };
}
