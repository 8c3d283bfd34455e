import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { createClaudeJudge } from '../../src/beliefs/llm-judge.js';
import type { Embedder } from '../../src/embedding/embedder.js';
import type { HttpEmbedderSettings } from '../../src/embedding/http.js';
import { createOllamaEmbedder } from '../../src/embedding/ollama.js';
import { createOpenAiEmbedder } from '../../src/embedding/openai.js';
import { createVoyageEmbedder } from '../../src/embedding/voyage.js';
import { createClaudeExtractor } from '../../src/extraction/claude.js';

/**
 * Run by test/embedding/timeout-gc.test.ts as `node --expose-gc`: every network call made against a
 * server that accepts requests and never answers, while garbage is collected every few
 * milliseconds. Prints one JSON line per call: how it ended and after how long.
 */
const TIMEOUT_MS = Number(process.argv[2] ?? 300);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const server = createServer(() => undefined);
server.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const collector = setInterval(gc, 10);
const log = pino({ level: 'silent' });

async function measure(name: string, call: () => Promise<unknown>): Promise<void> {
  const started = Date.now();
  let message = 'answered';
  try {
    await call();
  } catch (error) {
    message = error instanceof Error ? error.message : String(error);
  }
  process.stdout.write(`${JSON.stringify({ name, ms: Date.now() - started, message })}\n`);
}

const settings = (baseUrl: string): HttpEmbedderSettings => ({
  baseUrl,
  model: 'test-model',
  dimensions: 8,
  timeoutMs: TIMEOUT_MS,
  maxRetries: 1,
});
const embedders: [string, Embedder][] = [
  ['openai', await createOpenAiEmbedder(settings(`${url}/v1`))],
  ['voyage', await createVoyageEmbedder(settings(`${url}/v1`))],
  ['ollama', await createOllamaEmbedder(settings(url))],
];
for (const [name, embedder] of embedders) {
  await measure(name, () => embedder.embed(['a text that never gets its vector']));
  await embedder.close();
}

const claude = { apiKey: 'test-key', model: 'test-model', baseURL: url, timeoutMs: TIMEOUT_MS, log };
const judge = createClaudeJudge(claude);
await measure('judge', async () => {
  if ((await judge.judge('Lives in Berlin', ['Lives in Paris'])) === null) throw new Error('no judgement');
});
const extractor = createClaudeExtractor({ ...claude, maxFactChars: 8000 });
await measure('extractor', () => extractor.extract([{ role: 'user', content: 'I live in Berlin.' }]));

clearInterval(collector);
server.closeAllConnections();
server.close();
