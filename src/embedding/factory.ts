import type { Config } from '../config.js';
import type { Embedder } from './embedder.js';
import { createHashEmbedder } from './hash.js';

/** The embedder the configuration asks for (EMBEDDER and its EMBEDDING_* settings). */
export async function createEmbedder(config: Config): Promise<Embedder> {
  const e = config.embedding;
  const http = (defaults: { baseUrl: string; model: string }) => ({
    baseUrl: e.baseUrl ?? defaults.baseUrl,
    model: e.model ?? defaults.model,
    apiKey: e.apiKey,
    dimensions: e.dimensions,
    batchSize: e.batchSize,
    timeoutMs: e.timeoutMs,
    maxRetries: e.maxRetries,
  });
  switch (config.embedder) {
    case 'hash':
      return createHashEmbedder(config.hashEmbedderDimensions);
    case 'openai': {
      const { createOpenAiEmbedder, OPENAI_DEFAULTS } = await import('./openai.js');
      return createOpenAiEmbedder(http(OPENAI_DEFAULTS));
    }
    case 'voyage': {
      const { createVoyageEmbedder, VOYAGE_DEFAULTS } = await import('./voyage.js');
      return createVoyageEmbedder(http(VOYAGE_DEFAULTS));
    }
    case 'ollama': {
      const { createOllamaEmbedder, OLLAMA_DEFAULTS } = await import('./ollama.js');
      return createOllamaEmbedder(http(OLLAMA_DEFAULTS));
    }
    case 'local': {
      // Loaded on demand: the model and its runtime cost seconds and memory that `hash` never needs.
      const { createLocalEmbedder } = await import('./local.js');
      return createLocalEmbedder();
    }
  }
}
