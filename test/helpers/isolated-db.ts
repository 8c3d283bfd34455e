import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import request from 'supertest';
import { createApp } from '../../src/app.js';
import type { Clock } from '../../src/domain/core.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { startCore, type Running } from '../../src/start-core.js';
import { testApi, testConfig, type TestApi } from './harness.js';

/**
 * A database of its own, for tests that change what the whole database holds (its embedder) and so
 * cannot share the worker's: a fresh folder for the embedded engine, or a fresh database on the
 * server named by TEST_DATABASE_URL. `env` goes into testConfig; `drop` removes it.
 */
export interface IsolatedDb {
  env: Record<string, string>;
  drop(): Promise<void>;
}

export async function isolatedDatabase(): Promise<IsolatedDb> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-memory-test-'));
    return {
      env: { DATA_DIR: dir },
      drop: () => Promise.resolve(fs.rmSync(dir, { recursive: true, force: true })),
    };
  }
  const name = `agent_memory_iso_${randomUUID().replaceAll('-', '')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    env: { DATABASE_URL: url.toString() },
    drop: async () => {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** An empty database of its own with the worker's embedder, behind an API: where an export is imported. */
export async function freshDatabase(
  options: { clock?: Clock } = {},
): Promise<{ api: TestApi; running: Running; close: () => Promise<void> }> {
  // In process, the embedded engine needs no folder: memory is quicker to migrate.
  const iso: IsolatedDb = process.env.TEST_DATABASE_URL
    ? await isolatedDatabase()
    : { env: { DATA_DIR: ':memory:' }, drop: () => Promise.resolve() };
  const running = await startCore(testConfig(iso.env), {
    embedder: createHashEmbedder(256),
    log: pino({ level: 'silent' }),
  });
  const core = options.clock ? { ...running.core, clock: options.clock } : running.core;
  const app = createApp(core);
  return {
    api: { app, core, http: request(app) },
    running,
    close: async () => {
      await running.close();
      await iso.drop();
    },
  };
}

/**
 * An API for a test that runs the process-wide sweep (on a moved clock, or the real one): a sweep
 * reaches every tenant of its database. On Postgres the two vitest workers share the worker
 * database, and such a sweep once expired a session that the audit test, in the other worker, had
 * just ended; there the test gets a database of its own. On PGlite each worker has its database in
 * memory and runs its files one at a time, so the worker's database serves, without a migration.
 */
export async function sweepingApi(
  options: { clock?: Clock } = {},
): Promise<{ api: TestApi; close: () => Promise<void> }> {
  if (!process.env.TEST_DATABASE_URL) return { api: await testApi(options), close: () => Promise.resolve() };
  return freshDatabase(options);
}
