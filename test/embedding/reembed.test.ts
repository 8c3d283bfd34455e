import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { openDatabase } from '../../src/db/connect.js';
import { EmbedderMismatchError } from '../../src/db/migrate.js';
import { vectorIndexDimensions } from '../../src/db/vector.js';
import { reembedMemories, type ReembedProgress } from '../../src/reembed.js';
import type { Config } from '../../src/config.js';
import type { Actor } from '../../src/domain/core.js';
import { writeCanon } from '../../src/domain/records/canon.js';
import { createSession } from '../../src/domain/subjects/sessions.js';
import { storeMemory } from '../../src/domain/store/store.js';
import { createTenant } from '../../src/domain/tenancy/tenants.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { startCore } from '../../src/start-core.js';
import { recall } from '../../src/retrieval/recall.js';
import { engine, testConfig } from '../helpers/harness.js';
import { isolatedDatabase, type IsolatedDb } from '../helpers/isolated-db.js';
import { childEnv, exited, spawnCli } from '../helpers/cli.js';

/** Changing the embedder of a deployment: the refusal to start on foreign vectors, and `reembed`. */
const silent = pino({ level: 'silent' });
const TURNS = ['Shall we meet in Porto next month?', 'Gladly, the week of the festival.'];
const FACTS = [
  'Ada prefers tea over coffee',
  'Ada lives in Lisbon',
  'Ada is allergic to peanuts',
  'Ada plays the cello on Sundays',
  'Ada works as a structural engineer',
];

/** The facts, the canon entry and the session's turns. */
const STORED = FACTS.length + 1 + TURNS.length;

/** How many memories have a window vector, and of what size. */
async function windowSizes(config: Config): Promise<number[]> {
  const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  try {
    const rows = await sql<{ dims: number }>`
      SELECT vector_dims(window_embedding) AS dims FROM memories WHERE window_embedding IS NOT NULL`.execute(handle.db);
    return rows.rows.map((r) => Number(r.dims));
  } finally {
    await handle.close();
  }
}

async function countByEmbedder(config: Config): Promise<Record<string, number>> {
  const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  try {
    const rows = await handle.db
      .selectFrom('memories')
      .select(['embedder', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('embedder')
      .execute();
    return Object.fromEntries(rows.map((r) => [r.embedder, Number(r.n)]));
  } finally {
    await handle.close();
  }
}

describe(`changing the embedder on ${engine}`, () => {
  let iso: IsolatedDb;
  let config: Config;

  beforeAll(async () => {
    iso = await isolatedDatabase();
    config = testConfig(iso.env);
    const running = await startCore(config, { embedder: createHashEmbedder(256), log: silent });
    try {
      const { core } = running;
      const tenant = await createTenant(core, 'reembed-org');
      const actor: Actor = { tenantId: tenant.tenantId, keyId: tenant.keyId, scopes: new Set(['admin']) };
      for (const content of FACTS) {
        await storeMemory(core, actor, { agentId: 'a', content, anchor: { anchorExternalId: 'ada' } });
      }
      await writeCanon(core, actor, { agentId: 'admin', content: 'Never share   home addresses' });
      // Two turns of a session: the second has a window vector (migration 0008), made by this embedder.
      const { id: sessionId } = await createSession(core, actor, { agentId: 'a', anchor: { anchorExternalId: 'ada' } });
      for (const content of TURNS) {
        await storeMemory(core, actor, { agentId: 'a', content, anchor: { anchorExternalId: 'ada' }, sessionId });
      }
    } finally {
      await running.close();
    }
  });

  afterAll(async () => {
    await iso.drop();
  });

  it('refuses to start with another embedder than the stored vectors were made with, naming the command', async () => {
    const error = await startCore(config, { embedder: createHashEmbedder(64), log: silent }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbedderMismatchError);
    expect((error as Error).message).toMatch(/embedded with "hash:v1-256" but EMBEDDER is configured as "hash:v1-64"/);
    expect((error as Error).message).toContain('agent-memory reembed');
    // Refusing changed nothing.
    expect(await countByEmbedder(config)).toEqual({ 'hash:v1-256': STORED });
  });

  it('re-embeds every memory in batches, moves the vector index to the new size, and the service starts again', async () => {
    const target = createHashEmbedder(64);
    const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
    const progress: ReembedProgress[] = [];
    try {
      const { reembedded, windows } = await reembedMemories(handle, target, {
        batchSize: 2,
        onProgress: (p) => progress.push(p),
      });
      expect(reembedded).toBe(STORED);
      // The second turn's window, dropped with the old vectors, is made again at the new size.
      expect(windows).toBe(1);
      expect(progress[0]).toEqual({ done: 0, total: STORED });
      expect(progress.at(-1)).toEqual({ done: STORED + 1, total: STORED + 1 });
      // Batches of two: 0, 2, 4, 6, 8; then the window.
      expect(progress.map((p) => p.done)).toEqual([0, 2, 4, 6, 8, 8, 9]);
      expect(await vectorIndexDimensions(handle.db)).toEqual([64]);
      // A second run finds nothing left.
      expect(await reembedMemories(handle, target)).toEqual({ reembedded: 0, windows: 0, concepts: 0 });
    } finally {
      await handle.close();
    }
    expect(await countByEmbedder(config)).toEqual({ 'hash:v1-64': STORED });
    expect(await windowSizes(config)).toEqual([64]);

    const running = await startCore(config, { embedder: createHashEmbedder(64), log: silent });
    try {
      const { core } = running;
      const tenant = await core.db.selectFrom('tenants').select('id').executeTakeFirstOrThrow();
      const actor: Actor = { tenantId: tenant.id, keyId: null, scopes: new Set(['read']) };
      const results = await recall(core, actor, {
        agentId: 'a',
        query: 'which instrument does Ada play',
        anchor: { anchorExternalId: 'ada' },
        limit: 3,
        includeSuperseded: false,
      });
      expect(results[0]?.content).toBe('Ada plays the cello on Sundays');
    } finally {
      await running.close();
    }
  });

  it('`agent-memory reembed` does the same from the command line, with a progress bar', async () => {
    const env = childEnv({
      ...iso.env,
      EMBEDDER: 'hash',
      HASH_EMBEDDER_DIMENSIONS: '128',
      LOG_LEVEL: 'silent',
    });
    const child = spawnCli(['reembed', '--batch-size', '4'], env);
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    expect(await exited(child)).toBe(0);
    expect(stderr).toContain(`reembed [${'#'.repeat(30)}] ${STORED + 1}/${STORED + 1}`);
    expect(stderr).toContain(`re-embedded ${STORED} memories with hash:v1-128, embedded 1 window vectors`);
    expect(await countByEmbedder(config)).toEqual({ 'hash:v1-128': STORED });
    expect(await windowSizes(config)).toEqual([128]);
  });
});
