/**
 * Memories stored per second, one at a time and in batches, and by an import (synchronous, and
 * as a job polled to its end), with each embedder on each engine, printed side by side; and
 * recall's p99 on another subject, idle and while batches of 500 are stored (and those batches'
 * own rate: they give way to the recalls). Through the domain
 * core, as the routes call it (docs/benchmarks.md).
 *   npm run bench:ingest -- [--embedders local,hash] [--postgres URL] [--runs 3] [--single 100]
 *     [--batched 1000] [--import 10000] [--async-import 10000] [--recalls 40] [--watched 200] [--json]
 * Embedded PGlite (in memory), and Postgres with --postgres (or DATABASE_URL), in a throwaway
 * tenant of that database; --engines pglite,postgres picks them. `--embedder-batches` measures the embedder alone instead:
 * texts per second at 1, 16, 64 and 256 texts per call (of --texts 512).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { storeBatch } from '../src/domain/store/batch.js';
import type { Actor, Core } from '../src/domain/core.js';
import { storeMemory } from '../src/domain/store/store.js';
import { createTenant } from '../src/domain/tenancy/tenants.js';
import { createLocalEmbedder } from '../src/embedding/local.js';
import type { ImportJobInput } from '../src/jobs/import-job.js';
import { getJob, submitJob } from '../src/jobs/jobs.js';
import { startJobRunner } from '../src/jobs/runner.js';
import { importStream } from '../src/portability/run-import.js';
import { recall } from '../src/retrieval/recall.js';
import { startCore } from '../src/start-core.js';

const { values } = parseArgs({
  options: {
    embedders: { type: 'string', default: 'local,hash' },
    postgres: { type: 'string', default: process.env.DATABASE_URL },
    engines: { type: 'string' },
    runs: { type: 'string', default: '3' },
    single: { type: 'string', default: '100' },
    batched: { type: 'string', default: '1000' },
    import: { type: 'string', default: '10000' },
    'async-import': { type: 'string', default: '10000' },
    recalls: { type: 'string', default: '40' },
    watched: { type: 'string', default: '200' },
    texts: { type: 'string', default: '512' },
    json: { type: 'boolean', default: false },
    'embedder-batches': { type: 'boolean', default: false },
  },
});
const runs = Number(values.runs);

const WORDS = (
  'customer prefers email phone invoice budget meeting travel contract family hobby device allergy ' +
  'shipping billing asked changed confirmed worried morning evening weekly monthly project deadline ' +
  'report garden coffee tea dog cat Paris Berlin Lisbon Acme Globex renewal discount upgrade refund'
).split(' ');

/** A fact no earlier call of the run stored: created, not reinforced. */
const fact = (tag: string, i: number): string => {
  const words = Array.from({ length: 8 + (i % 7) }, (_, j) => WORDS[(i * 31 + j * 17 + j * j) % WORDS.length]);
  return `The customer ${words.join(' ')} (${tag} ${i})`;
};

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const p99 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(0.99 * (xs.length - 1))] ?? NaN;

async function embedderBatches(): Promise<void> {
  const texts = Array.from({ length: Number(values.texts) }, (_, i) => fact('e', i));
  const rows: { perCall: number; textsPerSecond: number[] }[] = [];
  for (const perCall of [1, 16, 64, 256]) {
    // One worker, one call at a time: what one call of that size costs the model.
    const embedder = await createLocalEmbedder({ workers: 1, batchSize: perCall, queryWorkers: 0 });
    const rates: number[] = [];
    for (let r = 0; r < runs; r++) {
      const started = performance.now();
      for (let i = 0; i < texts.length; i += perCall) await embedder.embed(texts.slice(i, i + perCall));
      rates.push(texts.length / ((performance.now() - started) / 1000));
    }
    await embedder.close();
    rows.push({ perCall, textsPerSecond: rates });
    console.log(
      `${perCall} texts per call: ${Math.round(median(rates))} texts/s (runs: ${rates.map(Math.round).join(', ')})`,
    );
  }
  if (values.json) console.log(JSON.stringify({ embedderBatches: rows }));
}

interface Figures {
  engine: string;
  embedder: string;
  single: number[];
  batch100: number[];
  batch500: number[];
  /** Batches of 500 while another subject is recalled, one query at a time: bulk work gives way to recalls. */
  batch500Recalled: number[];
  import: number[];
  asyncImport: number[];
  recallIdleP99: number[];
  recallLoadedP99: number[];
}

/** Recall latencies on `subject`, one query at a time, while `more` says so. */
async function recallLoop(core: Core, actor: Actor, subject: string, more: (q: number) => boolean) {
  const latencies: number[] = [];
  for (let q = 0; more(q); q++) {
    const started = performance.now();
    await recall(core, actor, {
      agentId: 'bench',
      query: `what does the customer prefer about ${WORDS[q % WORDS.length]}`,
      anchor: { anchorExternalId: subject },
      limit: 10,
      includeSuperseded: false,
    });
    latencies.push(performance.now() - started);
  }
  return latencies;
}

async function measure(engine: 'pglite' | 'postgres', embedderName: string): Promise<Figures> {
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: engine === 'postgres' ? values.postgres : undefined,
    DATA_DIR: ':memory:',
    EMBEDDER: embedderName,
    LOG_LEVEL: 'silent',
  });
  const running = await startCore(config, { log: pino({ level: 'silent' }) });
  const { core } = running;
  // The jobs of this process, as serve runs them (JOB_CONCURRENCY, JOB_POLL_MS).
  const jobs = startJobRunner(core);
  const figures: Figures = {
    engine: running.engine,
    embedder: core.embedder.id,
    single: [],
    batch100: [],
    batch500: [],
    batch500Recalled: [],
    import: [],
    asyncImport: [],
    recallIdleP99: [],
    recallLoadedP99: [],
  };
  try {
    const tenant = await createTenant(core, `bench-ingest-${randomUUID()}`);
    const actor: Actor = { tenantId: tenant.tenantId, keyId: tenant.keyId, scopes: new Set(['read', 'write']) };
    // The subject recalled, apart from those stored into.
    const watched = 'watched-subject';
    await storeBatch(
      core,
      actor,
      Array.from({ length: Number(values.watched) }, (_, i) => ({
        agentId: 'bench',
        content: fact('w', i),
        anchor: { anchorExternalId: watched },
      })),
    );
    const item = (tag: string, i: number) => ({
      agentId: 'bench',
      content: fact(tag, i),
      anchor: { anchorExternalId: `subject-${i % 20}` },
    });
    const rate = async (count: number, work: () => Promise<unknown>) => {
      const started = performance.now();
      await work();
      return count / ((performance.now() - started) / 1000);
    };
    for (let r = 0; r < runs; r++) {
      const tag = `r${r}`;
      const single = Number(values.single);
      figures.single.push(
        await rate(single, async () => {
          for (let i = 0; i < single; i++) await storeMemory(core, actor, item(`${tag}s`, i));
        }),
      );
      for (const size of [100, 500] as const) {
        const total = Math.max(size, Number(values.batched));
        const batches = async () => {
          for (let i = 0; i < total; i += size) {
            const results = await storeBatch(
              core,
              actor,
              Array.from({ length: Math.min(size, total - i) }, (_, k) => item(`${tag}b${size}`, i + k)),
            );
            if (results.some((x) => !x.ok)) throw new Error('a batch item failed');
          }
        };
        if (size === 100) {
          figures.batch100.push(await rate(total, batches));
          continue;
        }
        figures.batch500.push(await rate(total, batches));
        // Batches of 500 again while another subject is recalled, after its idle p99.
        const recalls = Number(values.recalls);
        const idle = await recallLoop(core, actor, watched, (q) => q < recalls);
        let done = false;
        const loaded = recallLoop(core, actor, watched, () => !done);
        figures.batch500Recalled.push(
          await rate(total, async () => {
            for (let i = 0; i < total; i += size) {
              await storeBatch(
                core,
                actor,
                Array.from({ length: Math.min(size, total - i) }, (_, k) => item(`${tag}b${size}x2`, i + k)),
              );
            }
          }),
        );
        done = true;
        figures.recallIdleP99.push(p99(idle));
        figures.recallLoadedP99.push(p99(await loaded));
      }
      figures.import.push(await rate(Number(values.import), () => importMem0(core, actor, tag, Number(values.import))));
      const asyncCount = Number(values['async-import']);
      if (asyncCount > 0) {
        figures.asyncImport.push(await rate(asyncCount, () => importMem0Job(core, actor, `${tag}j`, asyncCount)));
      }
      const last = (xs: number[]) => Math.round(xs[xs.length - 1] ?? NaN);
      process.stderr.write(
        `${engine} ${embedderName} run ${r + 1}/${runs}: single ${last(figures.single)}, batch 100 ${last(figures.batch100)}, ` +
          `batch 500 ${last(figures.batch500)} (${last(figures.batch500Recalled)} while recalled), import ${last(figures.import)}, async import ` +
          `${last(figures.asyncImport)} memories/s; recall p99 idle ` +
          `${last(figures.recallIdleP99)} ms, under batch load ${last(figures.recallLoadedP99)} ms\n`,
      );
    }
  } finally {
    await jobs.stop();
    await running.close();
  }
  return figures;
}

/** `count` mem0 memories, 20 users, one a line. */
function* mem0Lines(tag: string, count: number) {
  for (let i = 0; i < count; i++) {
    yield `${JSON.stringify({ id: randomUUID(), memory: fact(`${tag}i`, i), user_id: `mem0-user-${i % 20}` })}\n`;
  }
}

/** A synchronous import of `count` mem0 memories through POST /v1/import's writer. */
async function importMem0(core: Core, actor: Actor, tag: string, count: number) {
  const result = await importStream(core, actor, Readable.from(mem0Lines(tag, count)), {
    format: 'mem0',
    agentId: 'bench',
  });
  if (result.imported.memories !== count) throw new Error(`imported ${result.imported.memories} of ${count}`);
}

/**
 * POST /v1/import?async=true: the body kept with a job, run by this process's job runner, polled
 * (GET /v1/jobs/{id}) every 100 ms until it has succeeded. The time includes the submission.
 */
async function importMem0Job(core: Core, actor: Actor, tag: string, count: number) {
  const dir = await mkdtemp(join(tmpdir(), 'bench-ingest-'));
  try {
    const file = join(dir, 'mem0.jsonl');
    await writeFile(file, [...mem0Lines(tag, count)].join(''));
    const job = await submitJob<ImportJobInput>(core, actor, {
      kind: 'import',
      input: { format: 'mem0', agent_id: 'bench' },
      agentIds: null,
      bodyFile: file,
    });
    for (;;) {
      const polled = await getJob(core.db, actor, job.id);
      if (polled.state === 'failed') throw new Error(`the import job failed: ${JSON.stringify(polled.error)}`);
      if (polled.state === 'succeeded') {
        const memories = (polled.result as { imported?: { memories?: number } } | null)?.imported?.memories;
        if (memories !== count) throw new Error(`the import job imported ${String(memories)} of ${count}`);
        return;
      }
      await sleep(100);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function table(all: Figures[]): void {
  const cell = (xs: number[], unit = '') => (xs.length === 0 ? '–' : `${Math.round(median(xs))}${unit}`);
  const header =
    '| engine | embedder | single | batch 100 | batch 500 | batch 500 while recalled | import | async import | recall p99 idle / under batch load |';
  console.log(header);
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const f of all) {
    console.log(
      `| ${f.engine} | ${f.embedder} | ${cell(f.single)} | ${cell(f.batch100)} | ${cell(f.batch500)} | ${cell(f.batch500Recalled)} | ${cell(f.import)} | ${cell(f.asyncImport)} | ${cell(f.recallIdleP99, ' ms')} / ${cell(f.recallLoadedP99, ' ms')} |`,
    );
  }
}

if (values['embedder-batches']) {
  await embedderBatches();
} else {
  const engines = (values.engines?.split(',') ?? (values.postgres ? ['pglite', 'postgres'] : ['pglite'])).map((e) => {
    if (e !== 'pglite' && e !== 'postgres') throw new Error(`--engines: pglite or postgres, not ${e}`);
    if (e === 'postgres' && !values.postgres)
      throw new Error('--engines postgres needs --postgres URL (or DATABASE_URL)');
    return e;
  });
  const all: Figures[] = [];
  for (const embedder of (values.embedders ?? '').split(',').filter(Boolean)) {
    for (const engine of engines) all.push(await measure(engine, embedder));
  }
  console.log(`memories/s, median of ${runs} runs`);
  table(all);
  if (values.json) console.log(JSON.stringify({ runs, figures: all }));
}
