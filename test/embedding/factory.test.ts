import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createEmbedder } from '../../src/embedding/factory.js';

/** The embedder EMBEDDER names, each with the near-duplicate threshold measured for its model. */
describe('createEmbedder', () => {
  it('builds the hash embedder at the configured size, near-identical from 0.90', async () => {
    const embedder = await createEmbedder(loadConfig({ EMBEDDER: 'hash', HASH_EMBEDDER_DIMENSIONS: '64' }));
    expect(embedder).toMatchObject({ id: 'hash:v1-64', dimensions: 64, nearDuplicateThreshold: 0.9 });
    await embedder.close();
  });

  it('builds each network embedder with its defaults, near-identical from 0.95', async () => {
    // A configured dimension spares the probe request, so nothing needs to listen at the base URL.
    for (const [provider, model] of [
      ['openai', 'text-embedding-3-small'],
      ['voyage', 'voyage-3.5-lite'],
      ['ollama', 'nomic-embed-text'],
    ] as const) {
      const config = loadConfig({
        EMBEDDER: provider,
        EMBEDDING_API_KEY: 'test-key',
        EMBEDDING_BASE_URL: 'http://127.0.0.1:18999',
        EMBEDDING_DIMENSIONS: '8',
      });
      const embedder = await createEmbedder(config);
      expect(embedder).toMatchObject({ id: `${provider}:${model}:8`, dimensions: 8, nearDuplicateThreshold: 0.95 });
      await embedder.close();
    }
  });
});
