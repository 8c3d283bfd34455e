import { startDeadline } from '../deadline.js';
import { ActionableError } from '../errors.js';
import type { EmbedKind, Embedder, EmbedOptions } from './embedder.js';

/**
 * What the network embedders (openai, voyage, ollama) share: batching, a timeout per attempt,
 * retries with exponential backoff on what a retry can fix (timeouts, connection errors, 408, 425,
 * 429 and 5xx, honouring Retry-After), a dimension check on every vector, and unit length. Keys never
 * appear in errors or logs.
 */

export interface HttpEmbedderSettings {
  /** e.g. https://api.openai.com/v1 */
  baseUrl: string;
  model: string;
  apiKey?: string | undefined;
  /** Expected vector size. Unset: learned from one probe request when the embedder is created. */
  dimensions?: number | undefined;
  /** Texts per request. */
  batchSize?: number | undefined;
  /** Per attempt. */
  timeoutMs?: number | undefined;
  /** Attempts after the first one. */
  maxRetries?: number | undefined;
}

export class EmbeddingError extends ActionableError {
  constructor(
    message: string,
    /** Whether trying again may succeed. */
    readonly retryable: boolean,
    /** Milliseconds the server asked to wait (Retry-After), when it did. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'EmbeddingError';
  }
}

/** How one provider speaks: the request for a batch, and the vectors out of the answer. */
export interface WireFormat {
  /** The provider's name, the prefix of embedder ids and error messages. */
  provider: string;
  /** Path below the base URL. */
  path: string;
  headers(apiKey: string | undefined, url: URL): Record<string, string>;
  body(texts: string[], kind: EmbedKind, dimensions: number | undefined): unknown;
  /** The vectors in input order; throws EmbeddingError on a malformed answer. */
  vectors(answer: unknown, count: number): number[][];
  /** The provider's own error text from an error body, if it has one. */
  errorMessage(answer: unknown): string | undefined;
}

const RETRYABLE_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);
const BACKOFF_BASE_MS = 250;
const BACKOFF_MAX_MS = 8_000;
const RETRY_AFTER_MAX_MS = 30_000;
const DEFAULTS = { batchSize: 64, timeoutMs: 30_000, maxRetries: 3 };
/**
 * Not measured per provider and model: a strict value, because a false near-duplicate reinforces
 * the old memory in place of the new wording, while a missed one only keeps both.
 */
const NEAR_DUPLICATE_THRESHOLD = 0.95;

/** The base URL with `path` appended to its path; a query string (Azure's api-version) is kept. */
export function endpoint(baseUrl: string, path: string): URL {
  const url = new URL(baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
  return url;
}

function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  return Number.isFinite(ms) ? Math.min(Math.max(0, ms), RETRY_AFTER_MAX_MS) : undefined;
}

function unitLength(values: number[], provider: string): Float32Array {
  const v = Float32Array.from(values);
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum);
  if (!(norm > 0) || !Number.isFinite(norm)) {
    throw new EmbeddingError(`${provider} embedder: the model returned a zero or non-finite vector`, false);
  }
  for (let i = 0; i < v.length; i++) v[i] = (v[i] ?? 0) / norm;
  return v;
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new EmbeddingError('embedder closed', false));
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new EmbeddingError('embedder closed', false));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

function positiveInteger(value: number, what: string, provider: string): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`${provider} embedder: ${what} must be a positive integer`);
  return value;
}

/**
 * An Embedder over a WireFormat. Without `dimensions`, it embeds one probe text to learn the size,
 * so creating it needs the server to answer.
 */
export async function createHttpEmbedder(wire: WireFormat, settings: HttpEmbedderSettings): Promise<Embedder> {
  const { provider } = wire;
  const batchSize = positiveInteger(settings.batchSize ?? DEFAULTS.batchSize, 'batch size', provider);
  const timeoutMs = positiveInteger(settings.timeoutMs ?? DEFAULTS.timeoutMs, 'timeout', provider);
  const maxRetries = settings.maxRetries ?? DEFAULTS.maxRetries;
  if (!Number.isInteger(maxRetries) || maxRetries < 0)
    throw new RangeError(`${provider} embedder: retries must be ≥ 0`);
  if (settings.dimensions !== undefined) positiveInteger(settings.dimensions, 'dimensions', provider);
  const url = endpoint(settings.baseUrl, wire.path);
  const closing = new AbortController();

  /** One request, retried; returns the raw vectors of `texts`. */
  async function request(texts: string[], kind: EmbedKind): Promise<number[][]> {
    const body = JSON.stringify(wire.body(texts, kind, settings.dimensions));
    const headers = { 'content-type': 'application/json', ...wire.headers(settings.apiKey, url) };
    for (let attempt = 0; ; attempt++) {
      try {
        return await attemptOnce(body, headers, texts.length);
      } catch (error) {
        const failure =
          error instanceof EmbeddingError ? error : new EmbeddingError(`${provider} embedder: ${String(error)}`, false);
        if (closing.signal.aborted) throw new EmbeddingError(`${provider} embedder: closed`, false);
        if (!failure.retryable || attempt >= maxRetries) {
          if (attempt > 0) failure.message += ` (after ${attempt + 1} attempts)`;
          throw failure;
        }
        const backoff = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** attempt) * (0.5 + Math.random() / 2);
        await sleep(failure.retryAfterMs ?? backoff, closing.signal);
      }
    }
  }

  async function attemptOnce(body: string, headers: Record<string, string>, count: number): Promise<number[][]> {
    const deadline = startDeadline(timeoutMs, closing.signal);
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, { method: 'POST', headers, body, signal: deadline.signal });
      text = await response.text();
    } catch (error) {
      if (closing.signal.aborted) throw new EmbeddingError(`${provider} embedder: closed`, false);
      const reason = deadline.hit()
        ? `no answer within ${timeoutMs} ms`
        : `cannot reach ${url.origin}: ${error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error)}`;
      throw new EmbeddingError(`${provider} embedder: ${reason}`, true);
    } finally {
      deadline.clear();
    }
    let answer: unknown;
    try {
      answer = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      answer = undefined;
    }
    if (!response.ok) {
      const detail = wire.errorMessage(answer) ?? text.slice(0, 200);
      throw new EmbeddingError(
        `${provider} embedder: ${url.origin}${url.pathname} answered ${response.status}${detail ? `: ${detail}` : ''}`,
        RETRYABLE_STATUS.has(response.status),
        retryAfterMs(response.headers.get('retry-after')),
      );
    }
    if (answer === undefined) throw new EmbeddingError(`${provider} embedder: the answer is not JSON`, true);
    const vectors = wire.vectors(answer, count);
    if (vectors.length !== count) {
      throw new EmbeddingError(`${provider} embedder: ${vectors.length} vectors for ${count} texts`, false);
    }
    return vectors;
  }

  let dimensions = settings.dimensions;
  const check = (vectors: number[][]): Float32Array[] =>
    vectors.map((v) => {
      if (v.length !== dimensions) {
        throw new EmbeddingError(
          `${provider} embedder: ${settings.model} returned a ${v.length}-dimensional vector, expected ${dimensions}` +
            (settings.dimensions !== undefined ? ' (EMBEDDING_DIMENSIONS)' : ''),
          false,
        );
      }
      return unitLength(v, provider);
    });

  if (dimensions === undefined) {
    const [probe] = await request(['dimension probe'], 'document');
    dimensions = probe?.length ?? 0;
    if (dimensions < 1 || dimensions > 16000) {
      throw new EmbeddingError(`${provider} embedder: the probe returned a ${dimensions}-dimensional vector`, false);
    }
  }
  const size = dimensions;

  return {
    id: `${provider}:${settings.model}:${size}`,
    dimensions: size,
    nearDuplicateThreshold: NEAR_DUPLICATE_THRESHOLD,
    async embed(texts: readonly string[], options?: EmbedOptions): Promise<Float32Array[]> {
      if (closing.signal.aborted) throw new EmbeddingError(`${provider} embedder: closed`, false);
      const kind = options?.kind ?? 'document';
      const out: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += batchSize) {
        // Providers refuse empty input; a space embeds as the nearest thing to nothing.
        const batch = texts.slice(start, start + batchSize).map((t) => (t.length === 0 ? ' ' : t));
        out.push(...check(await request(batch, kind)));
      }
      return out;
    },
    close() {
      closing.abort();
      return Promise.resolve();
    },
  };
}

/** Reads `data[].embedding` (OpenAI and Voyage): ordered by `index` when the server gives one. */
export function dataEmbeddings(provider: string, answer: unknown): number[][] {
  const data = (answer as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw new EmbeddingError(`${provider} embedder: the answer has no data array`, false);
  const rows = data.map((item: unknown, i) => {
    const { embedding, index } = (item ?? {}) as { embedding?: unknown; index?: unknown };
    if (!Array.isArray(embedding) || !embedding.every((x) => typeof x === 'number')) {
      throw new EmbeddingError(`${provider} embedder: data[${i}] holds no numeric embedding`, false);
    }
    return { index: typeof index === 'number' ? index : i, embedding: embedding };
  });
  return rows.sort((a, b) => a.index - b.index).map((r) => r.embedding);
}

/** `{ error: { message } }` (OpenAI), `{ detail }` (Voyage), `{ error: "…" }` (Ollama). */
export function commonErrorMessage(answer: unknown): string | undefined {
  if (typeof answer !== 'object' || answer === null) return undefined;
  const { error, detail, message } = answer as { error?: unknown; detail?: unknown; message?: unknown };
  const text =
    typeof error === 'string'
      ? error
      : typeof (error as { message?: unknown } | undefined)?.message === 'string'
        ? (error as { message: string }).message
        : typeof detail === 'string'
          ? detail
          : typeof message === 'string'
            ? message
            : undefined;
  return text?.slice(0, 300);
}
