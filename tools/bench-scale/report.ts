import type { Latencies } from './measure.js';

export interface Results {
  engine: 'pglite' | 'postgres';
  memories: number;
  embedder: string;
  /** How long the dataset took to build (recorded with it); null when the tool did not open the database. */
  build: { load_seconds: number; index_seconds: number; analyze_seconds: number; reused: boolean } | null;
  recall: { label: string; size: number; latency: Latencies }[];
  /**
   * Mean milliseconds of the typical subjects' recalls as the client saw them, as the server's
   * request histogram and its recall histogram saw them; null when the server's /metrics is not
   * served beside the API.
   */
  typicalMeans: { client: number; server: { request: number; recall: number } } | null;
  throughput: { concurrency: number; perSecond: number; errors: number; latency: Latencies }[];
  store: { new: Latencies; reinforce: Latencies; session: Latencies };
  /** Peak VmRSS of the server this run started; null for a server given by --url. */
  serverRssMb: number | null;
}

const pad = (s: string | number, n: number): string => String(s).padStart(n);

/** The human-readable tables, for stdout. */
export function table(r: Results): string {
  const lines = [
    `engine ${r.engine}, ${r.memories} memories, embedder ${r.embedder}`,
    r.build === null
      ? 'build: unknown (server and key given)'
      : `build: load ${r.build.load_seconds} s, HNSW index ${r.build.index_seconds} s, ANALYZE ${r.build.analyze_seconds} s` +
        (r.build.reused ? ' (dataset reused from an earlier run)' : ''),
    '',
    'recall (limit 10), one at a time      scope  queries   p50 ms   p95 ms   p99 ms  errors',
    ...r.recall.map(
      (x) =>
        `  ${x.label.padEnd(34)} ${pad(x.size, 7)} ${pad(x.latency.count, 8)} ${pad(x.latency.p50, 8)} ${pad(x.latency.p95, 8)} ${pad(x.latency.p99, 8)} ${pad(x.latency.errors, 7)}`,
    ),
    r.typicalMeans === null
      ? '  typical subjects, means: not measured (no /metrics beside the API)'
      : `  typical subjects, means: ${r.typicalMeans.client} ms at the client, ${r.typicalMeans.server.request} ms in the server's request, ${r.typicalMeans.server.recall} ms in recall`,
    '',
    'recall throughput, subjects of ~100   concurrency  recalls/s   p50 ms   p95 ms  errors',
    ...r.throughput.map(
      (x) =>
        `  ${''.padEnd(34)} ${pad(x.concurrency, 11)} ${pad(x.perSecond, 10)} ${pad(x.latency.p50, 8)} ${pad(x.latency.p95, 8)} ${pad(x.errors, 7)}`,
    ),
    '',
    'store into a subject of ~100            stores   p50 ms   p95 ms  errors',
    `  new fact                           ${pad(r.store.new.count, 9)} ${pad(r.store.new.p50, 8)} ${pad(r.store.new.p95, 8)} ${pad(r.store.new.errors, 7)}`,
    `  reinforcement (same fact again)    ${pad(r.store.reinforce.count, 9)} ${pad(r.store.reinforce.p50, 8)} ${pad(r.store.reinforce.p95, 8)} ${pad(r.store.reinforce.errors, 7)}`,
    `  new turn of a session              ${pad(r.store.session.count, 9)} ${pad(r.store.session.p50, 8)} ${pad(r.store.session.p95, 8)} ${pad(r.store.session.errors, 7)}`,
    '',
    `server peak RSS: ${r.serverRssMb === null ? 'not measured (--url)' : `${r.serverRssMb} MiB`}`,
  ];
  return `${lines.join('\n')}\n`;
}

/** Keyed by scope size; a size that two scopes share gets the second one's name added. */
const byKey = <T, V>(items: T[], key: (t: T) => string | number, value: (t: T) => V): Record<string, V> => {
  const out: Record<string, V> = {};
  for (const t of items)
    out[String(key(t)) in out ? `${key(t)} ${String((t as { label?: string }).label)}` : String(key(t))] = value(t);
  return out;
};

/** The one JSON line that ends stdout with --json. */
export function jsonLine(r: Results): string {
  return JSON.stringify({
    engine: r.engine,
    memories: r.memories,
    embedder: r.embedder,
    build: r.build,
    recall_p50_ms_by_scope: byKey(
      r.recall,
      (x) => x.size,
      (x) => x.latency.p50,
    ),
    recall_p95_ms_by_scope: byKey(
      r.recall,
      (x) => x.size,
      (x) => x.latency.p95,
    ),
    recall_p99_ms_by_scope: byKey(
      r.recall,
      (x) => x.size,
      (x) => x.latency.p99,
    ),
    recall_queries_by_scope: byKey(
      r.recall,
      (x) => x.size,
      (x) => x.latency.count,
    ),
    recall_errors_by_scope: byKey(
      r.recall,
      (x) => x.size,
      (x) => x.latency.errors,
    ),
    typical_mean_ms:
      r.typicalMeans === null
        ? null
        : {
            client: r.typicalMeans.client,
            server_request: r.typicalMeans.server.request,
            recall: r.typicalMeans.server.recall,
          },
    recalls_per_second_by_concurrency: byKey(
      r.throughput,
      (x) => x.concurrency,
      (x) => x.perSecond,
    ),
    errors_by_concurrency: byKey(
      r.throughput,
      (x) => x.concurrency,
      (x) => x.errors,
    ),
    store_p50_ms: { new: r.store.new.p50, reinforce: r.store.reinforce.p50, session: r.store.session.p50 },
    store_p95_ms: { new: r.store.new.p95, reinforce: r.store.reinforce.p95, session: r.store.session.p95 },
    server_rss_mb: r.serverRssMb,
  });
}
