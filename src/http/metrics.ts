import { timingSafeEqual } from 'node:crypto';
import express, { type Request, type Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { MetricsConfig } from '../config.js';
import type { Core } from '../domain/core.js';
import { READ_TARGETS } from '../vocabulary.js';
import { measuredEmbedder } from '../measured.js';
import type { DomainMetrics } from '../domain/records/metrics.js';
import { AppError, toProblem } from '../errors.js';
import { LLM_PURPOSES, type LlmBreaker, type LlmCounts } from '../llm/breaker.js';

/** Latencies of a request-sized piece of work: from a cached embedding to a slow model call. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One registry per app, so several apps in one process (tests) do not collide. */
export function createMetrics(llm?: LlmBreaker, reads?: Core['reads']) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by method and route template',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  if (llm) registerLlmMetrics(registry, llm);
  if (reads) registerReadMetrics(registry, reads);
  return { registry, requests, duration, domain: domainMetrics(registry) };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** The core's own work (src/domain/records/metrics.ts), whichever door (REST, MCP over HTTP) asked for it. */
function domainMetrics(registry: Registry): DomainMetrics {
  const registers = [registry];
  const recallSeconds = new Histogram({
    name: 'agent_memory_recall_duration_seconds',
    help: 'Recall latency, embedding the query included, by result (ok, error)',
    labelNames: ['result'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const storeSeconds = new Histogram({
    name: 'agent_memory_store_duration_seconds',
    help: 'Latency of one store call (POST /v1/memories, the remember tool), by outcome',
    labelNames: ['outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const stored = new Counter({
    name: 'agent_memory_store_outcomes_total',
    help: 'Memories stored, by path (store, ingest) and outcome (created, reinforced, promoted, failed)',
    labelNames: ['via', 'outcome'] as const,
    registers,
  });
  const superseded = new Counter({
    name: 'agent_memory_superseded_total',
    help: 'Older memories superseded by a contradicting store, by path (store, ingest)',
    labelNames: ['via'] as const,
    registers,
  });
  const embedSeconds = new Histogram({
    name: 'agent_memory_embed_duration_seconds',
    help: 'Embedder call latency, by kind (document, query) and result (ok, error)',
    labelNames: ['kind', 'result'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const embedTexts = new Counter({
    name: 'agent_memory_embedded_texts_total',
    help: 'Texts sent to the embedder, by kind',
    labelNames: ['kind'] as const,
    registers,
  });
  const embedErrors = new Counter({
    name: 'agent_memory_embed_errors_total',
    help: 'Embedder calls that failed (timeout, provider error, refused input), by kind',
    labelNames: ['kind'] as const,
    registers,
  });
  const sweeps = new Counter({
    name: 'agent_memory_sweeps_total',
    help: 'Session sweeper runs, by result (swept, skipped: another process held the sweep, failed)',
    labelNames: ['result'] as const,
    registers,
  });
  const swept = new Counter({
    name: 'agent_memory_swept_memories_total',
    help: 'Expired session memories deleted by the sweeper',
    registers,
  });
  const sweepSeconds = new Histogram({
    name: 'agent_memory_sweep_duration_seconds',
    help: 'Session sweeper run latency',
    buckets: LATENCY_BUCKETS,
    registers,
  });
  // Every label value that can occur, at zero, so that rates and alerts have a series from the start.
  for (const result of ['ok', 'error']) recallSeconds.zero({ result });
  for (const via of ['store', 'batch', 'ingest']) {
    superseded.inc({ via }, 0);
    for (const outcome of ['created', 'reinforced', 'promoted', 'failed']) stored.inc({ via, outcome }, 0);
  }
  for (const kind of ['document', 'query']) {
    embedErrors.inc({ kind }, 0);
    embedTexts.inc({ kind }, 0);
  }
  for (const result of ['swept', 'skipped', 'failed']) sweeps.inc({ result }, 0);
  return {
    recall(seconds, failed) {
      recallSeconds.observe({ result: failed ? 'error' : 'ok' }, seconds);
    },
    store(via, seconds, outcome, count) {
      stored.inc({ via, outcome });
      if (count > 0) superseded.inc({ via }, count);
      if (seconds !== undefined) storeSeconds.observe({ outcome }, seconds);
    },
    embed(kind, texts, seconds, failed) {
      embedSeconds.observe({ kind, result: failed ? 'error' : 'ok' }, seconds);
      embedTexts.inc({ kind }, texts);
      if (failed) embedErrors.inc({ kind });
    },
    sweep(result, seconds, expired) {
      sweeps.inc({ result });
      sweepSeconds.observe(seconds);
      if (expired > 0) swept.inc(expired);
    },
  };
}

/**
 * The core as the server runs it: reporting to these metrics, with its embedder timed. A core that
 * already reports somewhere is kept as it is, so that nothing is counted twice.
 */
export function withMetrics(core: Core, metrics: Metrics): Core {
  if (core.metrics) return core;
  return { ...core, metrics: metrics.domain, embedder: measuredEmbedder(core.embedder, metrics.domain) };
}

/** The model's calls as the breaker counts them, read at each scrape: one breaker serves every app. */
function registerLlmMetrics(registry: Registry, llm: LlmBreaker): void {
  new Gauge({
    name: 'agent_memory_llm_circuit_open',
    help: '1 while model calls are skipped after repeated failures (the trial call included), else 0',
    registers: [registry],
    collect() {
      this.set(llm.isOpen() ? 1 : 0);
    },
  });
  const counter = (name: string, help: string, field: keyof LlmCounts): void => {
    new Counter({
      name,
      help,
      labelNames: ['purpose'] as const,
      registers: [registry],
      collect() {
        // The breaker holds the totals; the counter shows them as they stand.
        this.reset();
        for (const purpose of LLM_PURPOSES) this.inc({ purpose }, llm.counts(purpose)[field]);
      },
    });
  };
  counter('agent_memory_llm_calls_total', 'Calls made to the model, by purpose (judge, extract)', 'calls');
  counter('agent_memory_llm_failures_total', 'Model calls that failed (error, timeout, malformed answer)', 'failures');
  counter('agent_memory_llm_skipped_total', 'Model calls skipped while the circuit was open', 'skipped');
  counter(
    'agent_memory_llm_fallbacks_total',
    'Times the deterministic detector or extractor answered instead of the model',
    'fallbacks',
  );
}

/** Where recalls read, with DATABASE_READ_URL set: read at each scrape from the router's totals. */
function registerReadMetrics(registry: Registry, reads: NonNullable<Core['reads']>): void {
  new Gauge({
    name: 'agent_memory_read_replicas',
    help: 'Read replicas configured (DATABASE_READ_URL)',
    registers: [registry],
    collect() {
      this.set(reads.replicas.length);
    },
  });
  new Counter({
    name: 'agent_memory_recall_reads_total',
    help: 'Recalls by the database they read: replica, primary (read-your-writes), fallback (the replica failed)',
    labelNames: ['database'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const totals = reads.totals();
      for (const database of READ_TARGETS) this.inc({ database }, totals[database]);
    },
  });
}

/** Compares in constant time, so that the token cannot be guessed a byte at a time from timings. */
function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** With METRICS_TOKEN set, a scrape must carry `Authorization: Bearer <token>`. */
export function checkMetricsToken(req: Request, config: MetricsConfig): void {
  if (config.token === undefined) return;
  const match = /^Bearer\s+(\S+)$/i.exec(req.get('authorization') ?? '');
  if (!match?.[1] || !sameToken(match[1], config.token)) {
    throw new AppError('unauthorized', 'GET /metrics needs Authorization: Bearer with the METRICS_TOKEN value');
  }
}

/** The scrape itself, shared by the API's /metrics and the metrics port. */
export async function scrape(req: Request, res: Response, metrics: Metrics, config: MetricsConfig): Promise<string> {
  checkMetricsToken(req, config);
  res.type(metrics.registry.contentType);
  return metrics.registry.metrics();
}

/** The app of METRICS_PORT: GET /metrics and nothing else, so the API port can stay public while this one does not. */
export function createMetricsApp(metrics: Metrics, config: MetricsConfig): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/metrics', async (req: Request, res: Response) => {
    res.status(200).send(await scrape(req, res, metrics, config));
  });
  app.use((req: Request) => {
    throw new AppError('not_found', `no route ${req.method} ${req.path} on the metrics port; scrape GET /metrics`);
  });
  app.use((error: unknown, _req: Request, res: Response, _next: express.NextFunction) => {
    const problem = toProblem(error instanceof AppError ? error : new AppError('internal', 'the scrape failed'));
    if (problem.code === 'unauthorized') res.setHeader('WWW-Authenticate', 'Bearer');
    res.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
  });
  return app;
}
