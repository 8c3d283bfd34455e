import type { Embedder } from './embedder.js';
import { commonErrorMessage, createHttpEmbedder, EmbeddingError, type HttpEmbedderSettings } from './http.js';

export const OLLAMA_DEFAULTS = { baseUrl: 'http://127.0.0.1:11434', model: 'nomic-embed-text' } as const;

/**
 * Ollama's native `/api/embed`. It truncates input longer than the model's context by default,
 * which would store a vector of part of a memory without a word: `truncate: false` makes it answer
 * with an error instead.
 */
export function createOllamaEmbedder(settings: HttpEmbedderSettings): Promise<Embedder> {
  return createHttpEmbedder(
    {
      provider: 'ollama',
      path: 'api/embed',
      headers: (apiKey): Record<string, string> => (apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
      body: (texts) => ({ model: settings.model, input: texts, truncate: false }),
      vectors: (answer) => {
        const embeddings = (answer as { embeddings?: unknown } | null)?.embeddings;
        if (
          !Array.isArray(embeddings) ||
          !embeddings.every((v) => Array.isArray(v) && v.every((x) => typeof x === 'number'))
        ) {
          throw new EmbeddingError('ollama embedder: the answer has no embeddings array', false);
        }
        return embeddings;
      },
      errorMessage: commonErrorMessage,
    },
    settings,
  );
}
