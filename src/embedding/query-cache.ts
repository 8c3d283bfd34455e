import type { EmbedOptions, Embedder } from './embedder.js';

/**
 * Remembers the vectors of the last `size` search queries: agents ask the same question again (a
 * profile lookup per turn, a retry), and a query costs the local model ~6 ms of CPU and a remote one
 * a round trip. Only single queries are kept; documents are embedded once per store anyway. The
 * vectors returned are shared between callers, which only read them.
 */
export function cachingQueries(embedder: Embedder, size = 1000): Embedder {
  const cache = new Map<string, Float32Array>();
  return {
    id: embedder.id,
    dimensions: embedder.dimensions,
    nearDuplicateThreshold: embedder.nearDuplicateThreshold,
    close: () => embedder.close(),
    async embed(texts: readonly string[], options?: EmbedOptions): Promise<Float32Array[]> {
      const text = texts[0];
      if (options?.kind !== 'query' || texts.length !== 1 || text === undefined) return embedder.embed(texts, options);
      const hit = cache.get(text);
      if (hit) {
        // Most recently used last: a Map iterates in insertion order, so the oldest goes first.
        cache.delete(text);
        cache.set(text, hit);
        return [hit];
      }
      const vectors = await embedder.embed(texts, options);
      const vector = vectors[0];
      if (vector) {
        if (cache.size >= size) cache.delete(cache.keys().next().value as string);
        cache.set(text, vector);
      }
      return vectors;
    },
  };
}
