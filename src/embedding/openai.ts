import type { Embedder } from './embedder.js';
import { commonErrorMessage, createHttpEmbedder, dataEmbeddings, type HttpEmbedderSettings } from './http.js';

export const OPENAI_DEFAULTS = { baseUrl: 'https://api.openai.com/v1', model: 'text-embedding-3-small' } as const;

/** Azure OpenAI takes its key in an `api-key` header instead of a bearer token. */
export function isAzure(url: URL): boolean {
  return /\.(openai\.azure\.com|cognitiveservices\.azure\.com|services\.ai\.azure\.com)$/i.test(url.hostname);
}

/**
 * Any OpenAI-compatible `/embeddings` endpoint: OpenAI, Azure OpenAI (base URL
 * https://RESOURCE.openai.azure.com/openai/deployments/DEPLOYMENT?api-version=…), Ollama's /v1,
 * vLLM, Hugging Face TEI. Without a key, no Authorization header is sent (local servers need none).
 * A configured dimension is sent as `dimensions` to OpenAI's text-embedding-3 models, which can
 * shorten their vectors; for other models it is only checked.
 */
export function createOpenAiEmbedder(settings: HttpEmbedderSettings): Promise<Embedder> {
  return createHttpEmbedder(
    {
      provider: 'openai',
      path: 'embeddings',
      headers: (apiKey, url): Record<string, string> => {
        if (!apiKey) return {};
        return isAzure(url) ? { 'api-key': apiKey } : { authorization: `Bearer ${apiKey}` };
      },
      body: (texts, _kind, dimensions) => ({
        model: settings.model,
        input: texts,
        encoding_format: 'float',
        ...(dimensions !== undefined && settings.model.startsWith('text-embedding-3') ? { dimensions } : {}),
      }),
      vectors: (answer) => dataEmbeddings('openai', answer),
      errorMessage: commonErrorMessage,
    },
    settings,
  );
}
