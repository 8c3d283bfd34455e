/**
 * Recall and store at scale, over HTTP against a server: builds (or reuses) a dataset through the
 * project's own schema, starts `agent-memory serve` on it (the built CLI: run `npm run build` first)
 * and times recall by scope size, recall throughput by concurrency and store.
 *
 *   npm run bench:scale -- [--memories 100000] [--tenants 10] [--subjects 1000] [--big-subject 20000]
 *     [--big-agent N (default 100000, at most 40% of --memories)] [--dims 256] [--embedder hash]
 *     [--queries 200] [--scope-seconds 60] [--seconds 10] [--stores 100] [--port 18110]
 *     [--data-dir DIR] [--reuse] [--rebuild] [--build-only] [--url URL [--api-key KEY]] [--json] [--filter]
 *
 * --filter also times the big subject under a filter (POST /v1/memories/recall): one that lets a
 * tenth of it through (metadata.topic) and one that lets 5 of 10,000 through (metadata.rare).
 *
 * DATABASE_URL set: Postgres (an empty database, or one only this tool has written); else the
 * embedded database in --data-dir (default: a folder under the OS temp dir named for the sizes).
 * A finished dataset of the same sizes is reused; --rebuild builds it again. Progress goes to
 * stderr, the tables to stdout, and with --json one JSON line ends stdout.
 */
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { prepareDataset } from './bench-scale/dataset.js';
import { DEFAULT_LAYOUT, type Sizes } from './bench-scale/plan.js';
import { jsonLine, table, type Results } from './bench-scale/report.js';
import { measure } from './bench-scale/run.js';
import { startServer, type Server } from './bench-scale/server.js';

const { values } = parseArgs({
  options: {
    memories: { type: 'string', default: '100000' },
    tenants: { type: 'string', default: '10' },
    subjects: { type: 'string', default: '1000' },
    'big-subject': { type: 'string', default: '20000' },
    'big-agent': { type: 'string' },
    dims: { type: 'string', default: '256' },
    embedder: { type: 'string', default: 'hash' },
    queries: { type: 'string', default: '200' },
    'scope-seconds': { type: 'string', default: '60' },
    seconds: { type: 'string', default: '10' },
    stores: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '1,4,16,64' },
    port: { type: 'string', default: '18110' },
    url: { type: 'string' },
    'api-key': { type: 'string' },
    'data-dir': { type: 'string' },
    reuse: { type: 'boolean', default: false },
    rebuild: { type: 'boolean', default: false },
    'build-only': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    filter: { type: 'boolean', default: false },
  },
});

function count(name: string, value: string | undefined): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number, not "${value}"`);
  return n;
}

const memories = count('memories', values.memories);
const sizes: Sizes = {
  memories,
  tenants: count('tenants', values.tenants),
  subjects: count('subjects', values.subjects),
  bigSubject: count('big-subject', values['big-subject']),
  // 100k, unless that would leave too little of a small dataset for everything else.
  bigAgent:
    values['big-agent'] !== undefined
      ? count('big-agent', values['big-agent'])
      : Math.min(100_000, Math.floor(memories * 0.4)),
  layout: DEFAULT_LAYOUT,
};
const dims = count('dims', values.dims);
const log = (line: string): void => void process.stderr.write(`${line}\n`);

const databaseUrl = process.env.DATABASE_URL;
const dataDir =
  values['data-dir'] ??
  path.join(
    os.tmpdir(),
    `agent-memory-bench-scale-${sizes.memories}-${sizes.tenants}-${sizes.subjects}-${sizes.bigSubject}-${sizes.bigAgent}-${dims}`,
  );
const serverEnv: Record<string, string> = {
  ...(databaseUrl ? { DATABASE_URL: databaseUrl } : { DATA_DIR: dataDir }),
  EMBEDDER: values.embedder ?? 'hash',
  HASH_EMBEDDER_DIMENSIONS: String(dims),
  RATE_LIMIT_PER_MINUTE: '0',
  SWEEP_INTERVAL_SECONDS: '0',
  LOG_LEVEL: 'warn',
};
const config = loadConfig({ ...process.env, ...serverEnv });

// A server and key given: nothing to build or open (the embedded database is the server's alone then).
const dataset =
  values.url !== undefined && values['api-key'] !== undefined
    ? undefined
    : await prepareDataset(config, sizes, { rebuild: values.rebuild, reuse: values.reuse, progress: true, log });
if (values['build-only']) process.exit(0);

const port = count('port', values.port);
let server: Server | undefined;
try {
  if (values.url === undefined) {
    log(`starting agent-memory serve on port ${port}`);
    server = await startServer(serverEnv, port);
  }
  const url = values.url ?? (server as Server).url;
  const apiKey = values['api-key'] ?? dataset?.apiKey;
  if (apiKey === undefined) throw new Error('no API key: the dataset was not opened');
  const measured = await measure(url, apiKey, dataset?.marker.sizes ?? sizes, {
    queries: count('queries', values.queries),
    scopeSeconds: count('scope-seconds', values['scope-seconds']),
    seconds: count('seconds', values.seconds),
    concurrency: (values.concurrency ?? '').split(',').map((c) => count('concurrency', c.trim())),
    stores: count('stores', values.stores),
    filter: values.filter,
    log,
  });
  const results: Results = {
    engine: dataset?.engine ?? (databaseUrl ? 'postgres' : 'pglite'),
    memories: dataset?.marker.memories ?? sizes.memories,
    embedder: dataset?.marker.embedder ?? config.embedder,
    build: dataset
      ? {
          load_seconds: dataset.marker.load_seconds,
          index_seconds: dataset.marker.index_seconds,
          analyze_seconds: dataset.marker.analyze_seconds,
          reused: !dataset.built,
        }
      : null,
    ...measured,
    serverRssMb: server ? server.peakRssMb() : null,
  };
  process.stdout.write(table(results));
  if (values.json) process.stdout.write(`${jsonLine(results)}\n`);
} finally {
  await server?.stop();
}
