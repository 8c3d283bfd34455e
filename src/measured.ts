import type { Embedder } from './embedding/embedder.js';
import { recall, type RecallInput, type RecallResult } from './retrieval/recall.js';
import type { Actor, Core } from './domain/core.js';
import { storeBatch, type BatchItem, type BatchItemResult } from './domain/store/batch.js';
import { ingestConversation, type IngestInput, type IngestProgress, type IngestResult } from './domain/store/ingest.js';
import type { DomainMetrics } from './domain/records/metrics.js';
import { storeMemory, type StoreInput, type StoreResult } from './domain/store/store.js';

/**
 * The core's entry points as both doors call them, timed and counted for core.metrics. They wrap the
 * domain functions instead of living inside them, so the hot paths (recall, the store) stay free
 * of instrumentation and a core without metrics pays nothing but a clock read.
 */

const seconds = (started: number): number => (performance.now() - started) / 1000;

export async function measuredRecall(core: Core, actor: Actor, input: RecallInput): Promise<RecallResult[]> {
  const started = performance.now();
  try {
    const results = await recall(core, actor, input);
    core.metrics?.recall(seconds(started), false);
    return results;
  } catch (error) {
    core.metrics?.recall(seconds(started), true);
    throw error;
  }
}

export async function measuredStore(core: Core, actor: Actor, input: StoreInput): Promise<StoreResult> {
  const started = performance.now();
  try {
    const result = await storeMemory(core, actor, input);
    core.metrics?.store('store', seconds(started), result.outcome, result.supersedes.length);
    return result;
  } catch (error) {
    core.metrics?.store('store', seconds(started), 'failed', 0);
    throw error;
  }
}

/** Each item of a batch counts as a store, without a latency of its own (the call's is the request's). */
export async function measuredBatch(core: Core, actor: Actor, items: readonly BatchItem[]): Promise<BatchItemResult[]> {
  const results = await storeBatch(core, actor, items);
  for (const r of results) {
    if (r.ok) core.metrics?.store('batch', undefined, r.result.outcome, r.result.supersedes.length);
    else core.metrics?.store('batch', undefined, 'failed', 0);
  }
  return results;
}

/** Each fact an ingest stored counts as a store, without a latency of its own (the call's is the request's). */
export async function measuredIngest(
  core: Core,
  actor: Actor,
  input: IngestInput,
  onProgress?: (progress: IngestProgress) => void | Promise<void>,
): Promise<IngestResult> {
  try {
    const result = await ingestConversation(core, actor, input, onProgress);
    for (const m of result.memories) core.metrics?.store('ingest', undefined, m.outcome, m.supersedes?.length ?? 0);
    return result;
  } catch (error) {
    core.metrics?.store('ingest', undefined, 'failed', 0);
    throw error;
  }
}

/** The embedder with every call timed: latency and errors by kind (document or query). */
export function measuredEmbedder(embedder: Embedder, metrics: DomainMetrics): Embedder {
  return {
    id: embedder.id,
    dimensions: embedder.dimensions,
    nearDuplicateThreshold: embedder.nearDuplicateThreshold,
    async embed(texts, options) {
      const started = performance.now();
      const kind = options?.kind ?? 'document';
      try {
        const vectors = await embedder.embed(texts, options);
        metrics.embed(kind, texts.length, seconds(started), false);
        return vectors;
      } catch (error) {
        metrics.embed(kind, texts.length, seconds(started), true);
        throw error;
      }
    },
    close: () => embedder.close(),
  };
}
