import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { LLM_PURPOSES, type LlmBreaker, type LlmCounts } from '../llm/breaker.js';

/** One registry per app, so several apps in one process (tests) do not collide. */
export function createMetrics(llm?: LlmBreaker) {
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
  return { registry, requests, duration };
}

export type Metrics = ReturnType<typeof createMetrics>;

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
