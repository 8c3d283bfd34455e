import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

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
