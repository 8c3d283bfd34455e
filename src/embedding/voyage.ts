import type { Embedder } from './embedder.js';
import { commonErrorMessage, createHttpEmbedder, dataEmbeddings, type HttpEmbedderSettings } from './http.js';

export const VOYAGE_DEFAULTS = { baseUrl: 'https://api.voyageai.com/v1', model: 'voyage-3.5-lite' } as const;

/**
 * Voyage AI's `/embeddings`. Voyage embeds search queries and stored documents differently
 * (`input_type`), which recall asks for. Over-long input is refused rather than truncated, and a
 * configured dimension is sent as `output_dimension` (for the models that offer several).
 */
export function createVoyageEmbedder(settings: HttpEmbedderSettings): Promise<Embedder> {
  return createHttpEmbedder(
    {
      provider: 'voyage',
      path: 'embeddings',
      headers: (apiKey): Record<string, string> => (apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
      body: (texts, kind, dimensions) => ({
        model: settings.model,
        input: texts,
        input_type: kind,
        truncation: false,
        ...(dimensions !== undefined ? { output_dimension: dimensions } : {}),
      }),
      vectors: (answer) => dataEmbeddings('voyage', answer),
      errorMessage: commonErrorMessage,
    },
    settings,
  );
}
