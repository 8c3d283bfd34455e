import {
  client,
  recallLatency,
  recallThroughput,
  scopes,
  serverMeans,
  serverRecalls,
  storeLatency,
  type ServerRecalls,
} from './measure.js';
import type { Sizes } from './plan.js';
import type { Results } from './report.js';

export interface MeasureOptions {
  queries: number;
  /** Per recall scope, at most this long (a scope of seconds per recall would otherwise take hours). */
  scopeSeconds: number;
  seconds: number;
  concurrency: number[];
  stores: number;
  /** Also time the big subject under filters (scopes). */
  filter?: boolean;
  log: (line: string) => void;
}

/** Every measurement against a server whose dataset has these sizes. */
export async function measure(
  url: string,
  apiKey: string,
  sizes: Sizes,
  options: MeasureOptions,
): Promise<Pick<Results, 'recall' | 'typicalMeans' | 'throughput' | 'store'>> {
  const c = client(url, apiKey, 1);
  try {
    const recall: Results['recall'] = [];
    let typicalMeans: Results['typicalMeans'] = null;
    for (const [i, scope] of scopes(sizes, options.filter ?? false).entries()) {
      options.log(`recall: ${scope.label} (${scope.size} memories)`);
      // The first scope, the typical subjects: where its time goes, from the server's own metrics.
      let before: ServerRecalls | undefined;
      const latency = await recallLatency(c, scope, options.queries, options.scopeSeconds, 100 + i, async () => {
        if (i === 0) before = await serverRecalls(c);
      });
      const after = before && (await serverRecalls(c));
      if (before && after) typicalMeans = { client: latency.mean, server: serverMeans(before, after) };
      recall.push({ ...scope, latency });
    }
    const throughput: Results['throughput'] = [];
    for (const concurrency of options.concurrency) {
      options.log(`throughput: concurrency ${concurrency} for ${options.seconds} s`);
      throughput.push({ concurrency, ...(await recallThroughput(url, apiKey, sizes, concurrency, options.seconds)) });
    }
    options.log(`store: ${options.stores} new facts and their reinforcements`);
    const store = await storeLatency(c, sizes, options.stores);
    return {
      recall: recall.map(({ label, size, latency }) => ({ label, size, latency })),
      typicalMeans,
      throughput,
      store,
    };
  } finally {
    c.close();
  }
}
