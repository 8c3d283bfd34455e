import createFetchClient, { type Client, type ClientOptions } from 'openapi-fetch';
// Generated at build time from the server's OpenAPI document (npm run gen:client): the request and
// response types follow the routes as they are, never a copy kept by hand.
import type { components, operations, paths } from './openapi-types.js';

export type { components, operations, paths };

/** An RFC 9457 problem, as every error of the API is (docs/api.md §2). */
export interface Problem {
  type: string;
  title: string;
  status: number;
  /** invalid_request, unauthorized, insufficient_scope, not_found, conflict, … */
  code: string;
  detail: string;
  errors?: { path: string; message: string }[];
}

/** What a failed call throws through `ok`: the problem, whole, and the HTTP status. */
export class AgentMemoryError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(readonly problem: Problem) {
    super(`${problem.status} ${problem.code}: ${problem.detail}`);
    this.name = 'AgentMemoryError';
    this.status = problem.status;
    this.code = problem.code;
  }
}

const isProblem = (value: unknown): value is Problem =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Problem).code === 'string' &&
  typeof (value as Problem).status === 'number';

export type AgentMemoryClient = Client<paths>;

export interface AgentMemoryOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Where the server answers, e.g. http://127.0.0.1:8080 (without /v1). */
  baseUrl: string;
  /** An mk_ or rk_ key. */
  apiKey?: string;
}

/**
 * A typed client of the REST API: `client.GET('/v1/anchors/{id}', { params: { path: { id } } })`,
 * with paths, parameters, bodies and answers checked by the compiler against the server's document.
 */
export function createAgentMemoryClient(options: AgentMemoryOptions): AgentMemoryClient {
  const { apiKey, headers, ...rest } = options;
  return createFetchClient<paths>({
    ...rest,
    headers: { ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}), ...(headers as Record<string, string>) },
  });
}

/**
 * The answer of a call, or an AgentMemoryError holding its problem:
 * `const memory = await ok(client.POST('/v1/memories', { body }))`.
 */
export async function ok<D>(call: Promise<{ data?: D; error?: unknown; response: Response }>): Promise<D> {
  const { data, error, response } = await call;
  if (response.ok) return data as D;
  throw new AgentMemoryError(
    isProblem(error)
      ? error
      : {
          type: 'about:blank',
          title: response.statusText,
          status: response.status,
          code: 'http_error',
          detail: `the server answered ${response.status} without a problem document`,
        },
  );
}

export type Job = components['schemas']['Job'];

/**
 * Follows a job (a request sent with `?async=true`) until it has succeeded or failed, asking every
 * `intervalMs`; the finished job: `result` is what the synchronous call answers, `error` its
 * problem. Throws after `timeoutMs`.
 */
export async function waitForJob(
  client: AgentMemoryClient,
  id: string,
  options: { intervalMs?: number; timeoutMs?: number } = {},
): Promise<Job> {
  const { intervalMs = 500, timeoutMs = 600_000 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await ok(client.GET('/v1/jobs/{id}', { params: { path: { id } } }));
    if (job.state === 'succeeded' || job.state === 'failed') return job;
    if (Date.now() >= deadline) throw new Error(`job ${id} is still ${job.state} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
