import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The slow end-to-end files: child processes on the CLI (stdio, `serve`, reembed, the LoCoMo
 * tool, the MCP conformance suite against `serve`, three `serve` processes on one database, a `serve` process whose database restarts on a
 * cluster of the test's own, a `serve` killed mid-ingest, a `serve` killed while jobs run, `serve` killed with webhooks undelivered, the README walk-through against a fresh
 * `serve`), the local embedder's model, the data folder lock, a service wired from its environment,
 * operations with the database gone, network timeouts under forced garbage collection, and the
 * scale benchmark's dataset builder, the portability files that open a second database (the
 * export/import round trip, the CLI's export and import) or seed a large tenant (the streamed
 * export), and the console driven in Chromium. Together they took about three quarters of the test time,
 * so `npm test` runs the rest and `npm run test:e2e` these; CI runs both.
 */
const E2E = [
  'test/mcp/stdio.test.ts',
  'test/mcp/http.test.ts',
  'test/mcp/conformance.test.ts',
  'test/eval/locomo.test.ts',
  'test/embedding/reembed.test.ts',
  'test/embedding/configured.test.ts',
  'test/embedding-local.test.ts',
  'test/unit/data-dir-lock.test.ts',
  'test/http/ops.test.ts',
  'test/embedding/timeout-gc.test.ts',
  'test/tools/bench-scale.test.ts',
  'test/portability/cli.test.ts',
  'test/portability/round-trip.test.ts',
  'test/portability/export-stream.test.ts',
  'test/portability/export-limits.test.ts',
  'test/portability/spool-sweep.test.ts',
  'test/console/browser.test.ts',
  'test/cli/front-door.test.ts',
  'test/cli/serve-start.test.ts',
  'test/cli/replicas.test.ts',
  'test/http/db-restart.test.ts',
  'test/ingest/kill.test.ts',
  'test/jobs/restart.test.ts',
  'test/readme/walkthrough.test.ts',
  'test/webhooks/kill.test.ts',
];

/**
 * The slow project (`npm run test:slow`; CI runs it on both engines): the files that build a database
 * of their own (the bounded-rows check, the migration files from an earlier schema, the Citus
 * distribution layout, an embedder of another size), the scale check's 2,000-memory tenant, and the
 * type check of the integrations page's examples: chosen by each file's time on both engines, they
 * took 48% of `npm test`'s file time on PGlite, 37% on Postgres (docs/benchmarks.md, "The test suite").
 */
const SLOW = [
  'test/retrieval/scale.test.ts',
  'test/retrieval/bounded.test.ts',
  'test/db/migration-0008.test.ts',
  'test/db/migration-0009.test.ts',
  'test/db/migration-0010.test.ts',
  'test/db/migration-0017.test.ts',
  'test/db/citus-distribute.test.ts',
  'test/db/embedder-size-change.test.ts',
  'test/adapters/docs-examples.test.ts',
];

/** Starts each worker's database in a hook (test/helpers/worker-database.ts says why). */
const WORKER_DATABASE = 'test/helpers/worker-database.ts';

export default defineConfig({
  test: {
    // Files in one worker share its database (each test makes its own tenant), which saves
    // starting an embedded Postgres per file.
    pool: 'forks',
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      // Not a root `include`: a project that extends the root adds to its lists instead of replacing them.
      // fast and slow use every core: vitest's default leaves one free (one worker on two cores), and
      // their files share nothing but the Postgres database, where each test has its own tenant.
      {
        extends: true,
        test: {
          name: 'fast',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...E2E, ...SLOW],
          maxWorkers: '100%',
          setupFiles: [WORKER_DATABASE],
        },
      },
      { extends: true, test: { name: 'slow', include: SLOW, maxWorkers: '100%' } },
      // The child processes of these files want the cores the default leaves them; a group of its own,
      // since projects that run together in one group must agree on the worker count.
      { extends: true, test: { name: 'e2e', include: E2E, sequence: { groupOrder: 1 } } },
    ],
  },
});
