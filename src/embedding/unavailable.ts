import type { Logger } from 'pino';
import { UnavailableError } from '../errors.js';
import type { Embedder } from './embedder.js';
import { EmbeddingError } from './http.js';

/**
 * A network embedder that fails mid-request (the provider down, rate limited past its retries, a
 * wrong dimension) is the service being unavailable, not a bug: callers get `503 unavailable` and
 * may retry, and the provider's own message, which names hosts and models, goes to the log only.
 * Nothing was stored: every store embeds before it opens its transaction.
 */
export function reportingUnavailable(embedder: Embedder, log: Logger): Embedder {
  return {
    id: embedder.id,
    dimensions: embedder.dimensions,
    nearDuplicateThreshold: embedder.nearDuplicateThreshold,
    async embed(texts, options) {
      try {
        return await embedder.embed(texts, options);
      } catch (error) {
        if (!(error instanceof EmbeddingError)) throw error;
        log.warn({ event: 'embedding_failed', embedder: embedder.id, reason: error.message }, 'embedding failed');
        // The provider's own retries with backoff already spent their budget: a client should wait a while.
        throw new UnavailableError('the embedding service did not answer; try again shortly', 10);
      }
    },
    close: () => embedder.close(),
  };
}
