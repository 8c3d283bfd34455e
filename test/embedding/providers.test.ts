import { afterEach, describe, expect, it } from 'vitest';
import type { Embedder } from '../../src/embedding/embedder.js';
import { endpoint, type HttpEmbedderSettings } from '../../src/embedding/http.js';
import { createOllamaEmbedder } from '../../src/embedding/ollama.js';
import { createOpenAiEmbedder, isAzure } from '../../src/embedding/openai.js';
import { createVoyageEmbedder } from '../../src/embedding/voyage.js';
import { fakeVector, startStub, type HttpStub, type StubReply, type StubRequest } from '../helpers/http-stub.js';

/**
 * Each network embedder against a local server speaking its wire format: batching and order, the
 * dimension probe and check, retries with backoff, errors, timeouts.
 */
interface Provider {
  name: string;
  path: string;
  create(settings: HttpEmbedderSettings): Promise<Embedder>;
  /** A successful answer for a request's inputs, `dims` numbers each. */
  answer(req: StubRequest, dims: number): unknown;
  /** An error body in the provider's own shape. */
  error(message: string): unknown;
}

const dataAnswer = (req: StubRequest, dims: number) => ({
  object: 'list',
  // Out of order on purpose: the index says where each vector belongs.
  data: (req.body.input as string[])
    .map((text, index) => ({ object: 'embedding', index, embedding: fakeVector(text, dims) }))
    .reverse(),
  model: req.body.model,
  usage: { prompt_tokens: 1, total_tokens: 1 },
});

const providers: Provider[] = [
  {
    name: 'openai',
    path: '/v1/embeddings',
    create: createOpenAiEmbedder,
    answer: dataAnswer,
    error: (message) => ({ error: { message, type: 'invalid_request_error', code: null } }),
  },
  {
    name: 'voyage',
    path: '/v1/embeddings',
    create: createVoyageEmbedder,
    answer: dataAnswer,
    error: (message) => ({ detail: message }),
  },
  {
    name: 'ollama',
    path: '/api/embed',
    create: createOllamaEmbedder,
    answer: (req, dims) => ({
      model: req.body.model,
      embeddings: (req.body.input as string[]).map((t) => fakeVector(t, dims)),
    }),
    error: (message) => ({ error: message }),
  },
];

const KEY = 'sk-test-secret-key-0123456789';
let stub: HttpStub | undefined;
let embedder: Embedder | undefined;

afterEach(async () => {
  await embedder?.close();
  await stub?.close();
  embedder = undefined;
  stub = undefined;
});

function settings(p: Provider, url: string, extra: Partial<HttpEmbedderSettings> = {}): HttpEmbedderSettings {
  return {
    baseUrl: p.name === 'ollama' ? url : `${url}/v1`,
    model: 'test-model',
    apiKey: KEY,
    dimensions: 8,
    batchSize: 2,
    timeoutMs: 2000,
    maxRetries: 2,
    ...extra,
  };
}

const norm = (v: Float32Array) => Math.sqrt(v.reduce((a, x) => a + x * x, 0));

describe.each(providers)('$name embedder', (p) => {
  it('embeds in batches, in order, unit length, named by provider, model and size', async () => {
    stub = await startStub((req) => ({ body: p.answer(req, 8) }));
    embedder = await p.create(settings(p, stub.url));
    const texts = ['one', 'two', 'three', 'four', 'five'];
    const vectors = await embedder.embed(texts);
    expect(embedder.id).toBe(`${p.name}:test-model:8`);
    expect(embedder.dimensions).toBe(8);
    expect(stub.requests.map((r) => r.body.input)).toEqual([['one', 'two'], ['three', 'four'], ['five']]);
    expect(stub.requests.every((r) => r.path === p.path && r.method === 'POST')).toBe(true);
    expect(stub.requests[0]?.body.model).toBe('test-model');
    vectors.forEach((v, i) => {
      expect(v).toHaveLength(8);
      expect(norm(v)).toBeCloseTo(1, 5);
      // The same direction as what the server sent for that text.
      const sent = fakeVector(texts[i] ?? '', 8);
      const sentNorm = Math.sqrt(sent.reduce((a, x) => a + x * x, 0));
      expect(v[3]).toBeCloseTo((sent[3] ?? 0) / sentNorm, 5);
    });
    expect(stub.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('learns the dimension from one probe when none is configured', async () => {
    stub = await startStub((req) => ({ body: p.answer(req, 12) }));
    embedder = await p.create(settings(p, stub.url, { dimensions: undefined }));
    expect(embedder.dimensions).toBe(12);
    expect(embedder.id).toBe(`${p.name}:test-model:12`);
    expect(stub.requests).toHaveLength(1);
    expect(await embedder.embed(['a'])).toHaveLength(1);
  });

  it('refuses vectors of another size than configured', async () => {
    stub = await startStub((req) => ({ body: p.answer(req, 6) }));
    embedder = await p.create(settings(p, stub.url));
    await expect(embedder.embed(['a'])).rejects.toThrow(/6-dimensional vector, expected 8/);
    // Not something a retry fixes.
    expect(stub.requests).toHaveLength(1);
  });

  it('retries a 503 and a 429 with backoff, honouring Retry-After, then succeeds', async () => {
    const replies: StubReply[] = [
      { status: 503, body: p.error('overloaded') },
      { status: 429, headers: { 'retry-after': '0' }, body: p.error('slow down') },
    ];
    stub = await startStub((req, n) => replies[n - 1] ?? { body: p.answer(req, 8) });
    embedder = await p.create(settings(p, stub.url));
    const [v] = await embedder.embed(['again']);
    expect(v).toHaveLength(8);
    expect(stub.requests).toHaveLength(3);
  });

  it('gives up after the retries, saying why', async () => {
    stub = await startStub(() => ({ status: 500, body: p.error('model crashed') }));
    embedder = await p.create(settings(p, stub.url, { maxRetries: 1 }));
    await expect(embedder.embed(['x'])).rejects.toThrow(/answered 500: model crashed \(after 2 attempts\)/);
    expect(stub.requests).toHaveLength(2);
  });

  it('does not retry a client error, and never shows the key', async () => {
    stub = await startStub(() => ({ status: 400, body: p.error('input is too long') }));
    embedder = await p.create(settings(p, stub.url));
    const error = await embedder.embed(['x']).catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/answered 400: input is too long/);
    expect((error as Error).message).not.toContain(KEY);
    expect(stub.requests).toHaveLength(1);
  });

  it('times out a server that does not answer, retrying once', async () => {
    // The answer comes far later than any timer a busy machine could stretch, so finishing before it
    // shows the embedder gave up by itself (about 400 ms when idle); the stub drops it on close.
    stub = await startStub((req) => ({ delayMs: 30_000, body: p.answer(req, 8) }));
    embedder = await p.create(settings(p, stub.url, { timeoutMs: 150, maxRetries: 1 }));
    const started = Date.now();
    await expect(embedder.embed(['slow'])).rejects.toThrow(/no answer within 150 ms \(after 2 attempts\)/);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(stub.requests).toHaveLength(2);
  });

  it('fails creation when the probe cannot reach the server', async () => {
    stub = await startStub(() => ({}));
    const url = stub.url;
    await stub.close();
    stub = undefined;
    await expect(p.create(settings(p, url, { dimensions: undefined, maxRetries: 0, timeoutMs: 500 }))).rejects.toThrow(
      new RegExp(`${p.name} embedder: cannot reach`),
    );
  });
});

describe('provider wire details', () => {
  it('voyage embeds queries and documents as such, never truncating', async () => {
    stub = await startStub((req) => ({ body: dataAnswer(req, 8) }));
    embedder = await createVoyageEmbedder(settings(providers[1] as Provider, stub.url));
    await embedder.embed(['a stored fact']);
    await embedder.embed(['what is stored?'], { kind: 'query' });
    expect(stub.requests.map((r) => r.body.input_type)).toEqual(['document', 'query']);
    expect(stub.requests.every((r) => r.body.truncation === false)).toBe(true);
    expect(stub.requests[0]?.body.output_dimension).toBe(8);
  });

  it('ollama asks the server to refuse over-long input rather than truncate it', async () => {
    stub = await startStub((req) =>
      req.body.input.some((t: string) => t.length > 20)
        ? { status: 400, body: { error: 'the input length exceeds the context length' } }
        : { body: { embeddings: req.body.input.map((t: string) => fakeVector(t, 8)) } },
    );
    embedder = await createOllamaEmbedder(settings(providers[2] as Provider, stub.url));
    await embedder.embed(['short']);
    await expect(embedder.embed(['a text longer than the context of this model'])).rejects.toThrow(
      /exceeds the context length/,
    );
    expect(stub.requests.every((r) => r.body.truncate === false)).toBe(true);
  });

  it('openai sends dimensions only to the models that can shorten, and no key header without a key', async () => {
    stub = await startStub((req) => ({ body: dataAnswer(req, 8) }));
    const base = settings(providers[0] as Provider, stub.url);
    embedder = await createOpenAiEmbedder({ ...base, model: 'text-embedding-3-small' });
    await embedder.embed(['a']);
    await embedder.close();
    embedder = await createOpenAiEmbedder({ ...base, model: 'nomic-embed-text', apiKey: undefined });
    await embedder.embed(['a']);
    expect(stub.requests.map((r) => r.body.dimensions)).toEqual([8, undefined]);
    expect(stub.requests[1]?.headers.authorization).toBeUndefined();
  });

  it('openai reaches Azure deployments: api-key header, api-version kept', () => {
    const url = endpoint('https://res.openai.azure.com/openai/deployments/emb?api-version=2024-10-21', 'embeddings');
    expect(url.toString()).toBe(
      'https://res.openai.azure.com/openai/deployments/emb/embeddings?api-version=2024-10-21',
    );
    expect(isAzure(url)).toBe(true);
    expect(isAzure(new URL('https://api.openai.com/v1/embeddings'))).toBe(false);
    expect(endpoint('http://127.0.0.1:11434/v1/', 'embeddings').toString()).toBe(
      'http://127.0.0.1:11434/v1/embeddings',
    );
  });

  it('a closed embedder refuses work', async () => {
    stub = await startStub((req) => ({ body: dataAnswer(req, 8) }));
    embedder = await createOpenAiEmbedder(settings(providers[0] as Provider, stub.url));
    await embedder.close();
    await expect(embedder.embed(['a'])).rejects.toThrow(/closed/);
  });
});
