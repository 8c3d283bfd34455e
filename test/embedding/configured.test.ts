import { pino } from 'pino';
import request from 'supertest';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startCore, type Running } from '../../src/start-core.js';
import { engine, newTenant, testConfig } from '../helpers/harness.js';
import { fakeVector, startStub, type HttpStub } from '../helpers/http-stub.js';
import { isolatedDatabase, type IsolatedDb } from '../helpers/isolated-db.js';

/** A network embedder chosen by configuration, as `serve` wires it: the whole path from env to HTTP. */
const KEY = 'voyage-secret-key-0123456789';

describe('embedding configuration', () => {
  it('takes the providers and their settings, and refuses what cannot work', () => {
    const openai = loadConfig({ EMBEDDER: 'openai', OPENAI_API_KEY: 'sk-a', EMBEDDING_DIMENSIONS: '512' });
    expect(openai.embedder).toBe('openai');
    expect(openai.embedding).toMatchObject({ apiKey: 'sk-a', dimensions: 512, timeoutMs: 30000, maxRetries: 3 });
    // A local OpenAI-compatible server (Ollama's /v1, vLLM, TEI) needs no key.
    const local = loadConfig({ EMBEDDER: 'openai', EMBEDDING_BASE_URL: 'http://127.0.0.1:11434/v1' });
    expect(local.embedding.apiKey).toBeUndefined();
    expect(loadConfig({ EMBEDDER: 'ollama' }).embedding.apiKey).toBeUndefined();
    expect(() => loadConfig({ EMBEDDER: 'openai' })).toThrow(/EMBEDDING_API_KEY: EMBEDDER=openai needs a key/);
    expect(() => loadConfig({ EMBEDDER: 'voyage' })).toThrow(ConfigError);
    expect(() => loadConfig({ EMBEDDER: 'cohere' })).toThrow(/EMBEDDER/);
    expect(() => loadConfig({ EMBEDDER: 'ollama', EMBEDDING_BASE_URL: 'ftp://x' })).toThrow(/EMBEDDING_BASE_URL/);
    expect(() => loadConfig({ EMBEDDER: 'ollama', EMBEDDING_DIMENSIONS: '0' })).toThrow(/EMBEDDING_DIMENSIONS/);
  });

  it('never shows the key when the configuration is serialized', () => {
    const config = loadConfig({ EMBEDDER: 'voyage', EMBEDDING_API_KEY: KEY });
    expect(config.embedding.apiKey).toBe(KEY);
    expect(JSON.stringify(config)).not.toContain(KEY);
  });
});

describe(`a service configured with EMBEDDER=voyage on ${engine}`, () => {
  let iso: IsolatedDb | undefined;
  let stub: HttpStub | undefined;
  let running: Running | undefined;
  let failing = false;
  const logLines: string[] = [];

  afterEach(async () => {
    await running?.close();
    await stub?.close();
    running = undefined;
    stub = undefined;
  });

  afterAll(async () => {
    await iso?.drop();
  });

  it('embeds stored memories as documents and recall queries as queries, and answers 503 when the provider fails', async () => {
    iso = await isolatedDatabase();
    stub = await startStub((req) =>
      failing
        ? { status: 400, body: { detail: 'input too long for voyage-3.5-lite' } }
        : {
            body: {
              object: 'list',
              data: (req.body.input as string[]).map((text, index) => ({ index, embedding: fakeVector(text, 8) })),
            },
          },
    );
    const config = testConfig({
      ...iso.env,
      EMBEDDER: 'voyage',
      EMBEDDING_BASE_URL: `${stub.url}/v1`,
      VOYAGE_API_KEY: KEY,
      EMBEDDING_MAX_RETRIES: '0',
    });
    const log = pino({ level: 'warn' }, { write: (line: string) => void logLines.push(line) });
    running = await startCore(config, { log });
    expect(running.core.embedder.id).toBe('voyage:voyage-3.5-lite:8');
    const app = createApp(running.core);
    const api = { app, core: running.core, http: request(app) };
    const t = await newTenant(api);

    const stored = await api.http.post('/v1/memories').set(t.auth).send({ agent_id: 'a', content: 'Ada likes tea' });
    expect(stored.status).toBe(201);
    const recalled = await api.http.get('/v1/memories/recall').set(t.auth).query({ agent_id: 'a', query: 'tea?' });
    expect(recalled.status).toBe(200);
    expect(recalled.body.results.map((r: { id: string }) => r.id)).toEqual([stored.body.id]);
    // The probe at start, the store, the recall.
    expect(stub.requests.map((r) => [r.path, r.body.input_type, r.headers.authorization])).toEqual([
      ['/v1/embeddings', 'document', `Bearer ${KEY}`],
      ['/v1/embeddings', 'document', `Bearer ${KEY}`],
      ['/v1/embeddings', 'query', `Bearer ${KEY}`],
    ]);

    failing = true;
    const refused = await api.http.post('/v1/memories').set(t.auth).send({ agent_id: 'a', content: 'Ada likes rain' });
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('10');
    expect(refused.body).toMatchObject({ code: 'unavailable', detail: expect.stringMatching(/embedding service/) });
    // The provider's message is for the operator, not the client; the key is for nobody.
    expect(JSON.stringify(refused.body)).not.toMatch(/voyage-3\.5-lite|127\.0\.0\.1/);
    expect(logLines.join('\n')).toMatch(/embedding_failed.*input too long/);
    expect(logLines.join('\n')).not.toContain(KEY);
    const count = await running.core.db
      .selectFrom('memories')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
  });
});
