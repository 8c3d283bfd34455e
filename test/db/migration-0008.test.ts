import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reembedMemories } from '../../src/reembed.js';
import { toVectorLiteral } from '../../src/db/vector.js';
import { newId } from '../../src/domain/text.js';
import { windowText } from '../../src/domain/store/windows.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { recall } from '../../src/retrieval/recall.js';
import type { Running } from '../../src/start-core.js';
import { engine } from '../helpers/harness.js';
import { startedAfter } from '../helpers/earlier-schema.js';
import type { IsolatedDb } from '../helpers/isolated-db.js';

const embedder = createHashEmbedder(64);
const TURNS = ['Where did you spend the summer?', 'In Crete, with my sister.', 'Sounds lovely.'];

/**
 * A database as 0.6 left it (every migration but 0008, a session of three turns stored then),
 * started with 0008: recall works on the memories without windows, and `reembed` gives each turn
 * after the first the window the store path would have made.
 */
describe(`migration 0008 on a database in use, on ${engine}`, () => {
  let iso: IsolatedDb;
  let running: Running;
  const tenantId = newId();
  const ids = TURNS.map(() => newId());
  const sessionId = newId();

  beforeAll(async () => {
    ({ iso, running } = await startedAfter(
      (f) => f < '0008',
      async (db) => {
        const now = new Date();
        const anchorId = newId();
        await sql`INSERT INTO tenants (id, org_name) VALUES (${tenantId}, ${`org-${tenantId}`})`.execute(db);
        await sql`INSERT INTO entities (tenant_id, id, kind, external_id) VALUES (${tenantId}, ${anchorId}, 'subject', 'traveller')`.execute(
          db,
        );
        await sql`INSERT INTO sessions (tenant_id, id, agent_id, anchor_id, started_at)
          VALUES (${tenantId}, ${sessionId}, 'a', ${anchorId}, ${now})`.execute(db);
        const vectors = await embedder.embed(TURNS);
        for (const [i, content] of TURNS.entries()) {
          await sql`INSERT INTO memories (tenant_id, id, agent_id, content, content_key, binding, anchor_id, session_id,
              confidence, decay_rate, embedding, embedder, created_at, updated_at, last_reinforced_at)
            VALUES (${tenantId}, ${ids[i]}, 'a', ${content}, ${content}, 'session', ${anchorId}, ${sessionId}, 0.7, 0,
              ${toVectorLiteral(vectors[i] as Float32Array)}::vector, ${embedder.id}, ${now}, ${now}, ${now})`.execute(
            db,
          );
        }
      },
      embedder,
    ));
  });

  afterAll(async () => {
    await running?.close();
    await iso.drop();
  });

  const windows = async () =>
    (
      await sql<{ id: string; window: string | null }>`
        SELECT id, window_embedding::text AS window FROM memories WHERE tenant_id = ${tenantId} ORDER BY seq`.execute(
        running.core.db,
      )
    ).rows;

  it('recalls the memories stored before it, which have no windows yet', async () => {
    expect((await windows()).map((r) => r.window)).toEqual([null, null, null]);
    const actor = { tenantId, keyId: null, scopes: new Set(['read'] as const) };
    const results = await recall(running.core, actor, {
      agentId: 'a',
      query: 'summer in Crete',
      anchor: { anchorExternalId: 'traveller' },
      sessionId,
      limit: 3,
      includeSuperseded: false,
    });
    expect(results.map((r) => r.id).sort()).toEqual([...ids].sort());
  });

  it('gives every turn after the first its window with reembed, once', async () => {
    expect(await reembedMemories({ db: running.core.db }, embedder)).toEqual({
      reembedded: 0,
      windows: 2,
      concepts: 3,
    });
    const expected = await embedder.embed([
      windowText(TURNS[0] as string, TURNS[1] as string),
      windowText(TURNS[1] as string, TURNS[2] as string),
    ]);
    const rows = await windows();
    expect(rows[0]?.window).toBeNull();
    for (const [i, v] of expected.entries()) {
      const { rows: d } = await sql<{ d: number }>`
        SELECT (window_embedding::vector(64) <=> ${toVectorLiteral(v)}::vector(64))::float8 AS d
        FROM memories WHERE id = ${ids[i + 1]}::uuid`.execute(running.core.db);
      expect(d[0]?.d).toBeCloseTo(0, 6);
    }
    expect(await reembedMemories({ db: running.core.db }, embedder)).toEqual({
      reembedded: 0,
      windows: 0,
      concepts: 0,
    });
  });
});
