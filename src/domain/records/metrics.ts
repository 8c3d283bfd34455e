import type { EmbedKind } from '../../embedding/embedder.js';

/**
 * What the core reports as it works, for the server's /metrics (src/http/metrics.ts renders it with
 * prom-client). A port, not a registry: the domain knows nothing of Prometheus, and a core without
 * one (stdio, the CLI, most tests) reports nothing.
 */
export interface DomainMetrics {
  /** One recall, answered or failed. */
  recall(seconds: number, failed: boolean): void;
  /**
   * One memory stored by a store call or an ingest: its outcome (created, reinforced, promoted),
   * how many older memories it superseded; a store that failed has the outcome 'failed'.
   */
  store(via: 'store' | 'batch' | 'ingest', seconds: number | undefined, outcome: string, superseded: number): void;
  /** One embedder call of `texts` texts. */
  embed(kind: EmbedKind, texts: number, seconds: number, failed: boolean): void;
  /** One run of the session sweeper: swept (the number of memories), skipped (another process held it), failed. */
  sweep(result: 'swept' | 'skipped' | 'failed', seconds: number, expired: number): void;
}
