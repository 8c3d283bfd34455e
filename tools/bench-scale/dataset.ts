import { pino } from 'pino';
import type { Config } from '../../src/config.js';
import { insertKey } from '../../src/domain/tenancy/keys.js';
import { startCore } from '../../src/start-core.js';
import { clearDataset, loadDataset, readMarker, type Marker } from './loader.js';
import { makePlan, type Sizes } from './plan.js';

export interface Dataset {
  marker: Marker;
  engine: 'pglite' | 'postgres';
  /** False when an earlier run's dataset was reused. */
  built: boolean;
  /** A read and write key of the measured tenant, made for this run. */
  apiKey: string;
}

/** Key order aside: the marker comes back from jsonb, which orders keys its own way. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
const sameSizes = (a: Sizes, b: Sizes): boolean => canonical(a) === canonical(b);

/**
 * The dataset of these sizes, built unless a finished one of the same sizes and embedder is there
 * (`reuse` takes whatever finished one is there). The database is closed again on return, so that
 * a server can open the embedded one.
 */
export async function prepareDataset(
  config: Config,
  sizes: Sizes,
  options: { rebuild: boolean; reuse: boolean; progress: boolean; log: (line: string) => void },
): Promise<Dataset> {
  const running = await startCore(config, { log: pino({ level: 'warn' }) });
  try {
    const { core } = running;
    const existing = await readMarker(core.db);
    const fits =
      existing !== undefined &&
      existing.embedder === core.embedder.id &&
      (options.reuse || sameSizes(existing.sizes, sizes));
    let marker: Marker;
    if (fits && !options.rebuild) {
      marker = existing;
      options.log(`reusing the dataset built ${marker.built_at} (${marker.memories} memories)`);
    } else {
      if (options.reuse) throw new Error('--reuse: no finished dataset of this embedder in the database');
      options.log(`building ${sizes.memories} memories on ${running.engine}`);
      await clearDataset(core.db);
      marker = await loadDataset(core, running.engine, makePlan(sizes, core.clock()), options);
      options.log(
        `built in ${marker.load_seconds} s load, ${marker.index_seconds} s HNSW index, ${marker.analyze_seconds} s ANALYZE`,
      );
    }
    const { apiKey } = await insertKey(core.db, marker.tenant_id, core.clock(), 'bench-scale', ['read', 'write']);
    return { marker, engine: running.engine, built: !fits || options.rebuild, apiKey };
  } finally {
    await running.close();
  }
}
