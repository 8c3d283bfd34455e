import { describe, expect, it } from 'vitest';
import type { EmbedOptions, Embedder } from '../../src/embedding/embedder.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { cachingQueries } from '../../src/embedding/query-cache.js';

function counting(): Embedder & { calls: string[][] } {
  const inner = createHashEmbedder(32);
  const calls: string[][] = [];
  return {
    ...inner,
    calls,
    embed: (texts: readonly string[], options?: EmbedOptions) => {
      calls.push([...texts]);
      return inner.embed(texts, options);
    },
  };
}

describe('the query vector cache', () => {
  it('embeds a repeated query once, and documents every time', async () => {
    const inner = counting();
    const embedder = cachingQueries(inner, 2);
    const [first] = await embedder.embed(['where does she live?'], { kind: 'query' });
    const [again] = await embedder.embed(['where does she live?'], { kind: 'query' });
    expect(again).toBe(first);
    await embedder.embed(['she lives in Lyon'], { kind: 'document' });
    await embedder.embed(['she lives in Lyon'], { kind: 'document' });
    await embedder.embed(['she lives in Lyon']);
    expect(inner.calls).toEqual([
      ['where does she live?'],
      ['she lives in Lyon'],
      ['she lives in Lyon'],
      ['she lives in Lyon'],
    ]);
  });

  it('keeps the most recently used queries', async () => {
    const inner = counting();
    const embedder = cachingQueries(inner, 2);
    for (const q of ['a', 'b', 'a', 'c', 'a', 'b']) await embedder.embed([q], { kind: 'query' });
    // 'b' was the least recently used when 'c' came, so it is embedded again; 'a' never is.
    expect(inner.calls.map(([t]) => t)).toEqual(['a', 'b', 'c', 'b']);
  });
});
