import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { ActionableError } from './errors.js';
import type { Binding } from './vocabulary.js';

/** The only module that reads process.env: everything else receives a frozen Config. */

const positiveNumber = z.coerce.number().positive();
const rate = z.coerce.number().min(0);

/** A bare host name as a Host header carries it, without port: example.com, 10.0.0.5, [::1]. */
function isHostName(host: string): boolean {
  try {
    return new URL(`http://${host}`).hostname === host;
  } catch {
    return false;
  }
}

/** A proxy TRUST_PROXY may name: express's named ranges, an address, or a CIDR block. */
function isProxyAddress(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
  const [ip = '', bits, ...rest] = entry.split('/');
  const family = isIP(ip);
  if (family === 0 || ip.includes('%') || rest.length > 0) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
}

const HOPS = /^\d{1,2}$/;

/** true or false, as written in an environment. */
const flag = z.enum(['true', 'false']).transform((v) => v === 'true');

/**
 * The waits between a webhook delivery's attempts, in seconds: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
 * 10 h (Standard Webhooks' suggestion), eight attempts over 27.6 hours before the delivery fails.
 */
export const DEFAULT_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 36000];

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  // Hot standbys of DATABASE_URL's cluster that serve recall (docs/scale-out.md), comma-separated.
  DATABASE_READ_URL: z
    .string()
    .transform((v) => v.split(',').map((u) => u.trim()))
    .transform((urls) => urls.filter((u) => u.length > 0))
    .refine(
      (urls) => urls.every((u) => /^postgres(ql)?:\/\//.test(u)),
      'must be postgres:// or postgresql:// URLs separated by commas',
    )
    .optional(),
  READ_AFTER_WRITE_MS: z.coerce.number().int().min(0).default(10_000),
  DATA_DIR: z.string().min(1).optional(),
  XDG_DATA_HOME: z.string().min(1).optional(),
  SETUP_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  EMBEDDER: z.enum(['local', 'hash', 'openai', 'voyage', 'ollama']).default('local'),
  HASH_EMBEDDER_DIMENSIONS: z.coerce.number().int().min(16).max(2000).default(256),
  EMBEDDING_MODEL: z.string().trim().min(1).optional(),
  EMBEDDING_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  EMBEDDING_API_KEY: z.string().trim().min(1).optional(),
  OPENAI_API_KEY: z.string().trim().min(1).optional(),
  VOYAGE_API_KEY: z.string().trim().min(1).optional(),
  EMBEDDING_DIMENSIONS: z.coerce.number().int().min(1).max(16000).optional(),
  EMBEDDING_BATCH_SIZE: z.coerce.number().int().min(1).max(2048).optional(),
  EMBEDDING_TIMEOUT_MS: z.coerce.number().int().positive().default(30000),
  EMBEDDING_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(3),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  CONTENT_LIMIT_CHARS: z.coerce.number().int().positive().default(8000),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(1200),
  DECAY_PRIVATE: rate.default(0.05),
  DECAY_ANCHORED: rate.default(0.02),
  DECAY_SESSION: rate.default(0.2),
  DECAY_CANON: rate.default(0.01),
  INITIAL_CONFIDENCE: z.coerce.number().gt(0).max(1).default(0.7),
  SESSION_TTL_HOURS: positiveNumber.default(24),
  SWEEP_INTERVAL_SECONDS: z.coerce.number().int().min(0).default(60),
  DB_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  RECALL_EXACT_SCAN_MAX: z.coerce.number().int().min(0).max(1_000_000).default(20_000),
  BULK_YIELD_MS: z.coerce.number().int().min(0).max(60_000).default(50),
  ANTHROPIC_API_KEY: z.string().trim().min(1).optional(),
  ANTHROPIC_MODEL: z.string().trim().min(1).default('claude-haiku-4-5'),
  ANTHROPIC_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  LLM_TIMEOUT_MS: z.coerce.number().int().positive().default(3000),
  LLM_EXTRACTION_TIMEOUT_MS: z.coerce.number().int().positive().default(30000),
  // The circuit breaker in front of the model (src/llm/breaker.ts).
  LLM_BREAKER_FAILURES: z.coerce.number().int().min(0).default(3),
  LLM_BREAKER_COOLDOWN_MS: z.coerce.number().int().positive().default(30000),
  AGENT_ID: z.string().trim().min(1, 'must not be empty').max(200).optional(),
  MCP_ALLOWED_HOSTS: z
    .string()
    .transform((v) => v.split(',').map((h) => h.trim().toLowerCase()))
    .transform((hosts) => hosts.filter((h) => h.length > 0))
    .refine((hosts) => hosts.every(isHostName), 'must be host names separated by commas, without scheme or port')
    .optional(),
  // Sessions of /mcp kept by this process (src/mcp/sessions.ts).
  MCP_MAX_SESSIONS: z.coerce.number().int().min(1).default(1000),
  MCP_SESSION_IDLE_SECONDS: z.coerce.number().int().positive().default(1800),
  // Which peers may name the client in X-Forwarded-For: a hop count, or the proxies' addresses.
  TRUST_PROXY: z
    .string()
    .transform((v) => v.split(',').map((p) => p.trim()))
    .transform((parts) => parts.filter((p) => p.length > 0))
    .refine(
      (parts) => (parts.length === 1 && HOPS.test(parts[0] ?? '')) || parts.every(isProxyAddress),
      'must be a number of proxies, or their addresses (IP, CIDR, loopback, linklocal, uniquelocal) separated by commas',
    )
    .transform((parts) => (parts.length === 1 && HOPS.test(parts[0] ?? '') ? Number(parts[0]) : parts))
    .optional(),
  // The HTTP server against bad and abusive clients.
  AUTH_FAILURES_PER_MINUTE: z.coerce.number().int().min(0).default(30),
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().positive().default(20_000),
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000),
  // /metrics behind a bearer token, or on a port of its own (src/http/metrics.ts).
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  // Imports and exports (src/http/spool.ts, src/http/routes/portability.ts).
  SPOOL_DIR: z.string().min(1).optional(),
  SPOOL_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(8 * 1024 ** 3),
  IMPORT_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(4 * 1024 ** 3),
  IMPORT_MAX_COMPRESSION_RATIO: z.coerce.number().min(1).default(100),
  IMPORT_CONCURRENCY: z.coerce.number().int().min(1).default(4),
  IMPORT_CONCURRENCY_PER_TENANT: z.coerce.number().int().min(1).default(1),
  EXPORT_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(4),
  EXPORT_CONCURRENCY_PER_TENANT: z.coerce.number().int().min(1).default(2),
  // Jobs: work handed to the background with ?async=true (src/jobs).
  JOB_CONCURRENCY: z.coerce.number().int().min(0).max(64).default(2),
  JOB_POLL_MS: z.coerce.number().int().min(10).default(1000),
  JOB_LEASE_SECONDS: z.coerce.number().int().min(2).default(30),
  JOB_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(3),
  JOB_RETENTION_HOURS: positiveNumber.default(168),
  JOB_INPUT_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(256 * 1024 ** 2),
  EXPORT_WRITE_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
  // Webhooks (docs/webhooks.md).
  WEBHOOK_ALLOW_PRIVATE: flag.default(false),
  WEBHOOK_DISPATCH: flag.default(true),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().max(300_000).default(10_000),
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .transform((v) => v.split(',').map((p) => p.trim()))
    .refine(
      (parts) => parts.length >= 1 && parts.length <= 50 && parts.every((p) => /^\d+(\.\d+)?$/.test(p)),
      'must be seconds separated by commas (e.g. 5,300,1800)',
    )
    .transform((parts) => parts.map(Number))
    .default(DEFAULT_RETRY_SCHEDULE),
  WEBHOOK_POLL_MS: z.coerce.number().int().min(50).default(1_000),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(8),
  WEBHOOK_RETENTION_DAYS: z.coerce.number().positive().default(7),
});

/** Claude as the contradiction judge (docs/architecture.md §4). */
export interface AnthropicConfig {
  readonly apiKey: string;
  readonly model: string;
  /** Unset: the public API. */
  readonly baseUrl: string | undefined;
  /** The whole budget of one judgement, its retry included. */
  readonly timeoutMs: number;
}

export type EmbedderName = 'local' | 'hash' | 'openai' | 'voyage' | 'ollama';

/** The network embedders' settings (EMBEDDING_*); each provider has its own defaults for what is unset. */
export interface EmbeddingConfig {
  readonly model: string | undefined;
  readonly baseUrl: string | undefined;
  readonly apiKey: string | undefined;
  /** Expected vector size; unset: learned from one probe request at start. */
  readonly dimensions: number | undefined;
  readonly batchSize: number | undefined;
  readonly timeoutMs: number;
  readonly maxRetries: number;
}

/** Limits the HTTP server puts on its clients. */
export interface HttpLimitsConfig {
  /** Failed authentications per client address per minute before 429; 0 turns the throttle off. */
  readonly authFailuresPerMinute: number;
  /** Time to receive a request's headers. */
  readonly headersTimeoutMs: number;
  /** Time to receive a whole request, body included. */
  readonly requestTimeoutMs: number;
  /** How long an idle kept-alive connection stays open. */
  readonly keepAliveTimeoutMs: number;
}

/** How many imports or exports may run at once. */
export interface ConcurrencyConfig {
  readonly perTenant: number;
  readonly inAll: number;
}

/** Bounds on imports and exports, whose bodies pass through files in `spoolDir`. */
export interface PortabilityConfig {
  /** Where imports spool their bodies and exports their records. */
  readonly spoolDir: string;
  /** The most the import spools of this process hold at once, in bytes. */
  readonly spoolMaxBytes: number;
  /** The most one import body may hold once decompressed. */
  readonly importMaxBytes: number;
  /** A compressed import body may decompress to at most this many times the bytes received. */
  readonly importMaxCompressionRatio: number;
  readonly imports: ConcurrencyConfig;
  readonly exports: ConcurrencyConfig;
  /** An export whose client takes no more of it for this long is cut, and its resources released. */
  readonly exportWriteTimeoutMs: number;
}

export interface Config {
  readonly port: number;
  readonly host: string;
  /** Unset: the embedded database in dataDir. */
  readonly databaseUrl: string | undefined;
  /** Read replicas of databaseUrl that serve recall; empty: recall reads the primary. */
  readonly databaseReadUrls: readonly string[];
  /**
   * After a write by a key, its recalls read the primary for this long, so that they see that write
   * whatever the replicas' lag (docs/scale-out.md).
   */
  readonly readAfterWriteMs: number;
  /** A folder, or ':memory:' for an embedded database that keeps nothing. */
  readonly dataDir: string;
  readonly setupToken: string | undefined;
  readonly embedder: EmbedderName;
  readonly embedding: EmbeddingConfig;
  readonly hashEmbedderDimensions: number;
  readonly logLevel: string;
  readonly bodyLimitBytes: number;
  readonly contentLimitChars: number;
  /** Requests per key per minute; 0 turns the limit off. */
  readonly rateLimitPerMinute: number;
  readonly decayPerDay: Readonly<Record<Binding, number>>;
  readonly initialConfidence: number;
  readonly sessionTtlHours: number;
  /** How often `serve` deletes expired session memories; 0 turns the sweeper off. */
  readonly sweepIntervalSeconds: number;
  readonly dbPoolSize: number;
  /**
   * The longest one step of bulk work (a batch's group or statement, an import's chunk) waits for
   * the recalls in flight in this process before it goes ahead (src/domain/recall-gate.ts); 0 never waits.
   */
  readonly bulkYieldMs: number;
  /**
   * Up to this many memories in a recall's scope, the vector side scans them exactly (~1 µs a memory
   * on Postgres); beyond, it walks HNSW with the scope as a filter, which slows down as the scope
   * becomes a small share of the table (a 10,000-memory subject among 1,000,000: 90 ms).
   */
  readonly recallExactScanMax: number;
  /** Unset without ANTHROPIC_API_KEY: contradictions are then judged by the heuristic alone. */
  readonly anthropic: AnthropicConfig | undefined;
  /** The budget of one fact-extraction call (a batch of up to 100 messages), its retry included. */
  readonly extractionTimeoutMs: number;
  /** Failures in a row that make every model call skip for a cool-down (0: never); see src/llm/breaker.ts. */
  readonly llmBreaker: Readonly<{ failures: number; cooldownMs: number }>;
  /** The agent id of `agent-memory mcp` calls that name none (docs/api.md §7). */
  readonly agentId: string | undefined;
  /** Host names that /mcp accepts besides localhost, 127.0.0.1 and [::1] (DNS rebinding protection). */
  readonly mcpAllowedHosts: readonly string[];
  /** The most /mcp sessions this process keeps, and how long one stays without a request or an open stream. */
  readonly mcpSessions: Readonly<{ max: number; idleMs: number }>;
  /**
   * express's `trust proxy`: false (the socket's peer is the client), the number of proxies in front,
   * or their addresses; only then does X-Forwarded-For name the client address.
   */
  readonly trustProxy: false | number | readonly string[];
  readonly httpLimits: HttpLimitsConfig;
  readonly portability: PortabilityConfig;
  readonly metrics: MetricsConfig;
  readonly jobs: JobsConfig;
  readonly webhooks: WebhooksConfig;
}

/** Outbound webhooks (src/webhooks). */
export interface WebhooksConfig {
  /** Deliver to private, loopback and link-local addresses too (tests, a private network). */
  readonly allowPrivate: boolean;
  /** This process delivers; false leaves the outbox to other processes (events are still recorded). */
  readonly dispatch: boolean;
  /** One attempt's budget: connection, request and response. */
  readonly timeoutMs: number;
  /** The waits after each failed attempt, in milliseconds; attempts = its length + 1. */
  readonly retryScheduleMs: readonly number[];
  /** How often the dispatcher looks for due deliveries besides being woken by commits. */
  readonly pollMs: number;
  /** Deliveries in flight at once, per process. */
  readonly concurrency: number;
  /** Finished deliveries (delivered or failed) are kept this long. */
  readonly retentionMs: number;
}

export interface JobsConfig {
  /** Jobs this process runs at once; 0: it runs none (other processes of the database do). */
  readonly concurrency: number;
  /** How often an idle runner looks for queued jobs (a job submitted to this process wakes it at once). */
  readonly pollMs: number;
  /** A running job whose process has not renewed its lease for this long is taken over. */
  readonly leaseMs: number;
  /** Starts of one job, its restarts after a lost process included, before it is failed. */
  readonly maxAttempts: number;
  /** Finished jobs are deleted this long after they finished. */
  readonly retentionMs: number;
  /** The most an async import's body may hold (it is kept in the database until the job ends). */
  readonly inputMaxBytes: number;
}

export interface MetricsConfig {
  /** When set, /metrics answers only `Authorization: Bearer <token>`. */
  readonly token: string | undefined;
  /** When set, /metrics is served on this port (on HOST) instead of beside the API. */
  readonly port: number | undefined;
}

export class ConfigError extends ActionableError {}

// 0 hops and an empty list trust nobody, as unset does.
function trustProxy(setting: number | string[] | undefined): false | number | readonly string[] {
  if (setting === undefined || setting === 0) return false;
  if (typeof setting === 'number') return setting;
  return setting.length === 0 ? false : Object.freeze(setting);
}

function defaultDataDir(env: z.infer<typeof EnvSchema>): string {
  // MCP clients start servers in arbitrary working folders, so the default must not be relative.
  const base = env.XDG_DATA_HOME ?? path.join(os.homedir(), '.local', 'share');
  return path.join(base, 'agent-memory');
}

function anthropicConfig(env: z.infer<typeof EnvSchema>): AnthropicConfig | undefined {
  if (env.ANTHROPIC_API_KEY === undefined) return undefined;
  const anthropic: AnthropicConfig = {
    apiKey: env.ANTHROPIC_API_KEY,
    model: env.ANTHROPIC_MODEL,
    baseUrl: env.ANTHROPIC_BASE_URL,
    timeoutMs: env.LLM_TIMEOUT_MS,
  };
  // A config that gets logged or serialized whole must not carry the key: JSON.stringify and
  // pino call toJSON. It is not enumerable, so that spreading the object still copies the key.
  Object.defineProperty(anthropic, 'toJSON', {
    value: () => ({ ...anthropic, apiKey: '[redacted]' }),
    enumerable: false,
  });
  return Object.freeze(anthropic);
}

function embeddingConfig(env: z.infer<typeof EnvSchema>): EmbeddingConfig {
  const apiKey =
    env.EMBEDDING_API_KEY ??
    (env.EMBEDDER === 'openai' ? env.OPENAI_API_KEY : env.EMBEDDER === 'voyage' ? env.VOYAGE_API_KEY : undefined);
  // Local OpenAI-compatible servers (Ollama's /v1, vLLM, TEI) need no key; OpenAI and Voyage do.
  if (env.EMBEDDER === 'voyage' && apiKey === undefined) {
    throw new ConfigError('invalid configuration: EMBEDDING_API_KEY: EMBEDDER=voyage needs a key (or VOYAGE_API_KEY)');
  }
  if (env.EMBEDDER === 'openai' && apiKey === undefined && env.EMBEDDING_BASE_URL === undefined) {
    throw new ConfigError(
      'invalid configuration: EMBEDDING_API_KEY: EMBEDDER=openai needs a key (or OPENAI_API_KEY), or EMBEDDING_BASE_URL for a local server',
    );
  }
  const embedding: EmbeddingConfig = {
    model: env.EMBEDDING_MODEL,
    baseUrl: env.EMBEDDING_BASE_URL,
    apiKey,
    dimensions: env.EMBEDDING_DIMENSIONS,
    batchSize: env.EMBEDDING_BATCH_SIZE,
    timeoutMs: env.EMBEDDING_TIMEOUT_MS,
    maxRetries: env.EMBEDDING_MAX_RETRIES,
  };
  // As for the Anthropic key: a config that is logged or serialized whole must not carry it.
  Object.defineProperty(embedding, 'toJSON', {
    value: () => ({ ...embedding, apiKey: embedding.apiKey === undefined ? undefined : '[redacted]' }),
    enumerable: false,
  });
  return Object.freeze(embedding);
}

export function loadConfig(source: Record<string, string | undefined> = process.env): Config {
  // Empty strings count as unset, the way shells and .env files usually mean them.
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration: ${lines.join('; ')}`);
  }
  const env = parsed.data;
  // Node refuses a server whose headers may take longer than the whole request.
  if (env.METRICS_PORT !== undefined && env.METRICS_PORT === env.PORT) {
    throw new ConfigError('invalid configuration: METRICS_PORT: must differ from PORT');
  }
  if (env.DATABASE_READ_URL !== undefined && env.DATABASE_READ_URL.length > 0 && env.DATABASE_URL === undefined) {
    throw new ConfigError(
      'invalid configuration: DATABASE_READ_URL: read replicas need DATABASE_URL (the primary); the embedded database has none',
    );
  }
  if (env.HTTP_HEADERS_TIMEOUT_MS > env.HTTP_REQUEST_TIMEOUT_MS) {
    throw new ConfigError('invalid configuration: HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS');
  }
  return Object.freeze({
    port: env.PORT,
    host: env.HOST,
    databaseUrl: env.DATABASE_URL,
    databaseReadUrls: Object.freeze(env.DATABASE_READ_URL ?? []),
    readAfterWriteMs: env.READ_AFTER_WRITE_MS,
    dataDir: env.DATA_DIR ?? defaultDataDir(env),
    setupToken: env.SETUP_TOKEN,
    embedder: env.EMBEDDER,
    embedding: embeddingConfig(env),
    hashEmbedderDimensions: env.HASH_EMBEDDER_DIMENSIONS,
    logLevel: env.LOG_LEVEL,
    bodyLimitBytes: env.BODY_LIMIT_BYTES,
    contentLimitChars: env.CONTENT_LIMIT_CHARS,
    rateLimitPerMinute: env.RATE_LIMIT_PER_MINUTE,
    decayPerDay: Object.freeze({
      private: env.DECAY_PRIVATE,
      anchored: env.DECAY_ANCHORED,
      session: env.DECAY_SESSION,
      canon: env.DECAY_CANON,
    }),
    initialConfidence: env.INITIAL_CONFIDENCE,
    sessionTtlHours: env.SESSION_TTL_HOURS,
    sweepIntervalSeconds: env.SWEEP_INTERVAL_SECONDS,
    dbPoolSize: env.DB_POOL_SIZE,
    bulkYieldMs: env.BULK_YIELD_MS,
    recallExactScanMax: env.RECALL_EXACT_SCAN_MAX,
    anthropic: anthropicConfig(env),
    extractionTimeoutMs: env.LLM_EXTRACTION_TIMEOUT_MS,
    llmBreaker: Object.freeze({ failures: env.LLM_BREAKER_FAILURES, cooldownMs: env.LLM_BREAKER_COOLDOWN_MS }),
    agentId: env.AGENT_ID,
    mcpAllowedHosts: Object.freeze(env.MCP_ALLOWED_HOSTS ?? []),
    mcpSessions: Object.freeze({ max: env.MCP_MAX_SESSIONS, idleMs: env.MCP_SESSION_IDLE_SECONDS * 1000 }),
    trustProxy: trustProxy(env.TRUST_PROXY),
    httpLimits: Object.freeze({
      authFailuresPerMinute: env.AUTH_FAILURES_PER_MINUTE,
      headersTimeoutMs: env.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: env.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: env.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    }),
    portability: Object.freeze({
      spoolDir: env.SPOOL_DIR ?? os.tmpdir(),
      spoolMaxBytes: env.SPOOL_MAX_BYTES,
      // One body larger than the whole spool could never be taken: the smaller bound is the real one.
      importMaxBytes: Math.min(env.IMPORT_MAX_BYTES, env.SPOOL_MAX_BYTES),
      importMaxCompressionRatio: env.IMPORT_MAX_COMPRESSION_RATIO,
      imports: Object.freeze({ perTenant: env.IMPORT_CONCURRENCY_PER_TENANT, inAll: env.IMPORT_CONCURRENCY }),
      exports: Object.freeze({ perTenant: env.EXPORT_CONCURRENCY_PER_TENANT, inAll: env.EXPORT_CONCURRENCY }),
      exportWriteTimeoutMs: env.EXPORT_WRITE_TIMEOUT_MS,
    }),
    metrics: Object.freeze({ token: env.METRICS_TOKEN, port: env.METRICS_PORT }),
    jobs: Object.freeze({
      concurrency: env.JOB_CONCURRENCY,
      pollMs: env.JOB_POLL_MS,
      leaseMs: env.JOB_LEASE_SECONDS * 1000,
      maxAttempts: env.JOB_MAX_ATTEMPTS,
      retentionMs: env.JOB_RETENTION_HOURS * 3_600_000,
      inputMaxBytes: env.JOB_INPUT_MAX_BYTES,
    }),
    webhooks: Object.freeze({
      allowPrivate: env.WEBHOOK_ALLOW_PRIVATE,
      dispatch: env.WEBHOOK_DISPATCH,
      timeoutMs: env.WEBHOOK_TIMEOUT_MS,
      retryScheduleMs: Object.freeze(env.WEBHOOK_RETRY_SCHEDULE.map((s) => Math.round(s * 1000))),
      pollMs: env.WEBHOOK_POLL_MS,
      concurrency: env.WEBHOOK_CONCURRENCY,
      retentionMs: env.WEBHOOK_RETENTION_DAYS * 24 * 3600 * 1000,
    }),
  });
}
