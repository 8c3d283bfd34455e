/**
 * Recall of this checkout against another's (an earlier commit, extracted beside it), in one
 * process: each version's own recall on its own copy of a bench:scale dataset (embedded), over the
 * typical subjects, queries interleaved (A B, B A, …) so that whatever else the machine does falls
 * on both alike. No HTTP: only what recall itself costs.
 *
 *   npx tsx tools/bench-ab-recall.ts --other DIR --other-data DIR --data DIR [--recalls 300]
 *
 * --other: the root of the other checkout (its src is imported as it is); --other-data and --data:
 * the embedded data directories of a bench:scale dataset that each version built (--build-only).
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { recall } from '../src/retrieval/recall.js';
import { startCore } from '../src/start-core.js';
import { AGENT_READER, orgName, typicalSubject } from './bench-scale/plan.js';
import { prng, query } from './bench-scale/text.js';

const { values } = parseArgs({
  options: {
    other: { type: 'string' },
    'other-data': { type: 'string' },
    data: { type: 'string' },
    recalls: { type: 'string', default: '300' },
    subjects: { type: 'string', default: '40' },
  },
});
if (!values.other || !values['other-data'] || !values.data)
  throw new Error('--other, --other-data and --data are needed');
const recalls = Number(values.recalls);
const subjects = Number(values.subjects);

type Recall = typeof recall;
type Start = typeof startCore;
type Load = typeof loadConfig;
const other = path.resolve(values.other);
const otherRecall = ((await import(path.join(other, 'src/retrieval/recall.ts'))) as { recall: Recall }).recall;
const otherStart = ((await import(path.join(other, 'src/start-core.ts'))) as { startCore: Start }).startCore;
const otherLoad = ((await import(path.join(other, 'src/config.ts'))) as { loadConfig: Load }).loadConfig;

const env = (dir: string) => ({
  DATA_DIR: dir,
  EMBEDDER: 'hash',
  HASH_EMBEDDER_DIMENSIONS: '256',
  SWEEP_INTERVAL_SECONDS: '0',
});
const log = pino({ level: 'silent' });
const side = async (name: string, start: Start, load: Load, run: Recall, dir: string) => {
  const running = await start(load(env(dir)), { log });
  const { id } = await running.core.db
    .selectFrom('tenants')
    .select('id')
    .where('org_name', '=', orgName(0))
    .executeTakeFirstOrThrow();
  return {
    name,
    running,
    run,
    actor: { tenantId: id, keyId: null, scopes: new Set(['read'] as const) },
    ms: [] as number[],
  };
};
const sides = [
  await side('other', otherStart, otherLoad, otherRecall, values['other-data']),
  await side('this', startCore, loadConfig, recall, values.data),
];
const random = prng(77);
// The first 20 rounds warm both up and are not counted.
for (let i = -20; i < recalls; i++) {
  const text = query(random);
  for (const s of i % 2 === 0 ? sides : [...sides].reverse()) {
    const started = performance.now();
    await s.run(s.running.core, s.actor, {
      agentId: AGENT_READER,
      query: text,
      anchor: { anchorExternalId: typicalSubject(((i % subjects) + subjects) % subjects) },
      limit: 10,
      includeSuperseded: false,
    });
    if (i >= 0) s.ms.push(performance.now() - started);
  }
}
for (const s of sides) {
  const sorted = [...s.ms].sort((a, b) => a - b);
  const at = (p: number) => (sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? NaN).toFixed(1);
  console.log(`${s.name}: ${s.ms.length} recalls, p50 ${at(0.5)} ms, p95 ${at(0.95)} ms`);
  await s.running.close();
}
