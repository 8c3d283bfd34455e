import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Embedder } from '../src/embedding/embedder.js';
import { createLocalEmbedder, createLocalEmbedderWithWorker } from '../src/embedding/local.js';

// Loading the model takes a few seconds per worker on a small machine, and every test embeds for real.
const TIMEOUT = 120_000;

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}

function norm(v: Float32Array): number {
  return Math.sqrt(dot(v, v));
}

function cosine(a: Float32Array, b: Float32Array): number {
  return dot(a, b) / (norm(a) * norm(b));
}

describe('local embedder (USE Lite)', { timeout: TIMEOUT }, () => {
  let embedder: Embedder;

  beforeAll(async () => {
    embedder = await createLocalEmbedder();
  }, TIMEOUT);

  afterAll(async () => {
    await embedder?.close();
  });

  it('names the model and returns 512-d unit vectors', async () => {
    expect(embedder.id).toBe('local:use-lite-512');
    expect(embedder.dimensions).toBe(512);
    expect(embedder.nearDuplicateThreshold).toBe(0.93);
    const vectors = await embedder.embed(['hello world', 'The quick brown fox jumps over the lazy dog.']);
    expect(vectors).toHaveLength(2);
    for (const v of vectors) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v).toHaveLength(512);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
  });

  it('keeps the caller order for a shuffled batch of mixed lengths', async () => {
    const texts = [
      'A long sentence about the history of the Roman empire, its roads, its aqueducts and its many emperors.',
      'cats',
      'Where did I leave my keys yesterday evening?',
      '',
      'The meeting with the design team moved to Thursday at three in the afternoon.',
      'ok',
      'Paris is the capital of France.',
      'A very long text. '.repeat(40),
      'I prefer tea over coffee in the morning.',
      'Deploy the service to the staging cluster before noon.',
      'hi',
      'Quantum computers use qubits.',
      'The recipe needs two eggs, a cup of flour, some milk and a pinch of salt.',
      'rain',
      'Remember that the user is allergic to peanuts.',
      'What time is it?',
      'Photosynthesis converts light into chemical energy in plants.',
      'x',
      'She runs five kilometres every Sunday along the river.',
      'The invoice is due at the end of the month.',
    ];
    const together = await embedder.embed(texts);
    expect(together).toHaveLength(texts.length);
    for (const [i, text] of texts.entries()) {
      const [alone] = await embedder.embed([text]);
      const vector = together[i];
      expect(alone).toBeDefined();
      expect(vector).toBeDefined();
      expect(cosine(vector!, alone!), `text #${i}: ${JSON.stringify(text.slice(0, 40))}`).toBeGreaterThan(0.999);
      expect(norm(vector!)).toBeCloseTo(1, 5);
    }
  });

  it('scores related sentences above unrelated ones', async () => {
    const [dogs, favourite, stocks] = await embedder.embed([
      'I love dogs',
      'Dogs are my favourite animal',
      'The stock market fell today',
    ]);
    const related = dot(dogs!, favourite!);
    expect(related).toBeGreaterThan(dot(dogs!, stocks!));
    expect(related).toBeGreaterThan(dot(favourite!, stocks!));
  });

  it('returns [] for an empty input', async () => {
    await expect(embedder.embed([])).resolves.toEqual([]);
  });

  it('serves concurrent calls, each in its own order', async () => {
    const calls = [
      ['I love dogs', 'The stock market fell today'],
      ['rain', 'sun', 'snow', 'A storm is coming from the west tonight.'],
      ['Dogs are my favourite animal'],
      Array.from({ length: 40 }, (_, i) => `note number ${i} about ${i % 2 === 0 ? 'work' : 'family'}`),
    ];
    const [expected, results] = await Promise.all([
      Promise.all(calls.map(async (texts) => Promise.all(texts.map(async (t) => (await embedder.embed([t]))[0]!)))),
      Promise.all(calls.map((texts) => embedder.embed(texts))),
    ]);
    results.forEach((vectors, c) => {
      expect(vectors).toHaveLength(calls[c]!.length);
      vectors.forEach((v, i) => expect(cosine(v, expected[c]![i]!)).toBeGreaterThan(0.999));
    });
  });

  it('rejects non-string texts', async () => {
    await expect(embedder.embed(['ok', 42 as unknown as string])).rejects.toThrow(/texts\[1\] is not a string/);
  });
});

describe('local embedder lifecycle', { timeout: TIMEOUT }, () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-memory-embedder-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function fakeWorker(name: string, source: string): Promise<URL> {
    const path = join(dir, name);
    await writeFile(path, source);
    return pathToFileURL(path);
  }

  it('rejects embed after close', async () => {
    const embedder = await createLocalEmbedder({ workers: 1 });
    const [vector] = await embedder.embed(['before close']);
    expect(vector).toHaveLength(512);
    await embedder.close();
    await embedder.close();
    await expect(embedder.embed(['after close'])).rejects.toThrow(/closed/);
  });

  it('rejects calls still in flight when closed', async () => {
    const embedder = await createLocalEmbedder({ workers: 1, batchSize: 4 });
    const pending = expect(embedder.embed(Array.from({ length: 64 }, (_, i) => `sentence ${i}`))).rejects.toThrow(
      /closed/,
    );
    await embedder.close();
    await pending;
  });

  it('rejects creation with a clear error when the model cannot load', async () => {
    const url = await fakeWorker(
      'init-error.mjs',
      `import { parentPort } from 'node:worker_threads';
       parentPort.postMessage({ type: 'init-error', message: 'no weights here' });`,
    );
    await expect(createLocalEmbedderWithWorker(url, { workers: 2 })).rejects.toThrow(
      /model could not be loaded.*no weights here/,
    );
  });

  it('rejects creation when a worker throws while starting', async () => {
    const url = await fakeWorker('throws.mjs', `throw new Error('boom at start');`);
    await expect(createLocalEmbedderWithWorker(url)).rejects.toThrow(/model could not be loaded.*boom at start/);
  });

  it('rejects pending calls when a worker crashes, and every later call', async () => {
    // Answers nothing and dies on its first batch, the way an aborted wasm runtime takes a thread down.
    const url = await fakeWorker(
      'crash.mjs',
      `import { parentPort } from 'node:worker_threads';
       parentPort.on('message', () => { setTimeout(() => process.exit(3), 50); });
       parentPort.postMessage({ type: 'ready' });`,
    );
    const embedder = await createLocalEmbedderWithWorker(url, { workers: 2, batchSize: 2 });
    await Promise.all([
      expect(embedder.embed(['a', 'b', 'c', 'd', 'e', 'f'])).rejects.toThrow(/worker exited unexpectedly \(code 3\)/),
      expect(embedder.embed(['g'])).rejects.toThrow(/worker exited unexpectedly/),
    ]);
    await expect(embedder.embed(['h'])).rejects.toThrow(/unusable after a worker failure/);
    await embedder.close();
  });

  it('embeds a search query on its own worker while documents queue on the others', async () => {
    // 200 ms a batch, vectors of 512 values: a slow model, so that waiting behind a batch shows.
    const url = await fakeWorker(
      'slow.mjs',
      `import { parentPort } from 'node:worker_threads';
       parentPort.on('message', (m) => setTimeout(() => {
         const vectors = new Float32Array(m.texts.length * 512).fill(1 / Math.sqrt(512));
         parentPort.postMessage({ type: 'result', id: m.id, vectors }, [vectors.buffer]);
       }, 200));
       parentPort.postMessage({ type: 'ready' });`,
    );
    const embedder = await createLocalEmbedderWithWorker(url, { workers: 1, batchSize: 1 });
    const started = performance.now();
    const documents = embedder.embed(['a', 'b', 'c', 'd', 'e']).then(() => performance.now() - started);
    const query = embedder.embed(['q'], { kind: 'query' }).then(() => performance.now() - started);
    const [documentsMs, queryMs] = await Promise.all([documents, query]);
    expect(documentsMs).toBeGreaterThanOrEqual(900);
    expect(queryMs).toBeLessThan(600);
    await embedder.close();
    // Without a query worker, the query still goes first: behind the one batch in flight only.
    const shared = await createLocalEmbedderWithWorker(url, { workers: 1, batchSize: 1, queryWorkers: 0 });
    const again = performance.now();
    const queued = shared.embed(['a', 'b', 'c', 'd', 'e']);
    const [vector] = await shared.embed(['q'], { kind: 'query' });
    expect(vector).toHaveLength(512);
    expect(performance.now() - again).toBeLessThan(800);
    await queued;
    await shared.close();
  });

  it('rejects the pending call when a worker throws while embedding', async () => {
    const url = await fakeWorker(
      'throws-on-embed.mjs',
      `import { parentPort } from 'node:worker_threads';
       parentPort.on('message', () => { throw new Error('kaboom'); });
       parentPort.postMessage({ type: 'ready' });`,
    );
    const embedder = await createLocalEmbedderWithWorker(url, { workers: 1 });
    await expect(embedder.embed(['a'])).rejects.toThrow(/worker crashed: kaboom/);
    await expect(embedder.embed(['b'])).rejects.toThrow(/unusable after a worker failure: .*kaboom/);
    await embedder.close();
  });
});
