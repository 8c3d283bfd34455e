import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { reembedMemories } from '../../src/reembed.js';
import type { Actor, Core } from '../../src/domain/core.js';
import { storeMemory as storeInCore } from '../../src/domain/store/store.js';
import { windowText } from '../../src/domain/store/windows.js';
import { createHashEmbedder } from '../../src/embedding/hash.js';
import { FUSION } from '../../src/retrieval/fusion.js';
import { engine, newTenant, testApi, type TestApi } from '../helpers/harness.js';
import { recall, startSession, storeMemory } from '../helpers/store-recall.js';

/**
 * Window vectors (migration 0008): a session memory embedded with the one stored before it, kept
 * only while that memory exists, filled by `reembed`, and blended into recall's distance.
 */
const embedder = createHashEmbedder(256);

/** Each memory's distance from its window vector to `text`'s vector; null where it has none. */
async function windowDistances(core: Core, ids: readonly string[], text: string): Promise<(number | null)[]> {
  const [v] = await embedder.embed([text]);
  const literal = `[${Array.from(v ?? []).join(',')}]`;
  const rows = await sql<{ id: string; d: number | null }>`
    SELECT id, (window_embedding::vector(256) <=> ${literal}::vector(256))::float8 AS d
    FROM memories WHERE id = ANY(${[...ids]}::uuid[])`.execute(core.db);
  const byId = new Map(rows.rows.map((r) => [r.id, r.d]));
  return ids.map((id) => byId.get(id) ?? null);
}

async function hasWindow(core: Core, id: string): Promise<boolean> {
  const row = await sql<{
    has: boolean;
  }>`SELECT window_embedding IS NOT NULL AS has FROM memories WHERE id = ${id}::uuid`.execute(core.db);
  return row.rows[0]?.has ?? false;
}

async function conversation(
  api: TestApi,
  auth: { Authorization: string },
  subject: Record<string, unknown>,
  turns: string[],
) {
  const session = await startSession(api, auth, subject);
  const ids: string[] = [];
  for (const content of turns) ids.push(await storeMemory(api, auth, { ...subject, session_id: session, content }));
  return { session, ids };
}

describe(`window vectors on ${engine}`, () => {
  const TURNS = ['Have you ever been to Lisbon?', 'Yes, twice, for the tiles and the trams.', 'Lucky you!'];

  it('embeds a session memory with the one before it, and no other memory', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const subject = { agent_id: 'a', anchor_external_id: 'traveller' };
    const { ids } = await conversation(api, t.auth, subject, TURNS);
    const [first, second, third] = ids as [string, string, string];
    const lone = await storeMemory(api, t.auth, { agent_id: 'a', content: 'A private note on trams.' });
    expect(await hasWindow(api.core, first)).toBe(false);
    expect(await hasWindow(api.core, lone)).toBe(false);
    const [d2, d3] = await windowDistances(api.core, [second, third], windowText(TURNS[0] ?? '', TURNS[1] ?? ''));
    expect(d2).toBeCloseTo(0, 6);
    // The third's window reads the second and itself, not the first.
    expect(d3).toBeGreaterThan(0.05);
    const [d3own] = await windowDistances(api.core, [third], windowText(TURNS[1] ?? '', TURNS[2] ?? ''));
    expect(d3own).toBeCloseTo(0, 6);
  });

  it('drops a window whose memory before it changed while it was embedded', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const subject = { agent_id: 'a', anchor_external_id: 'racer' };
    const { session } = await conversation(api, t.auth, subject, ['The first turn of the talk.']);
    // An embedder that lets another store into the session land while it embeds the next one.
    let interloper: Promise<string> | undefined;
    const core: Core = {
      ...api.core,
      embedder: {
        ...api.core.embedder,
        embed: async (texts, options) => {
          if (!interloper && texts.some((x) => x.includes('slow turn'))) {
            interloper = storeMemory(api, t.auth, {
              ...subject,
              session_id: session,
              content: 'A quick interjection.',
            });
            await interloper;
          }
          return api.core.embedder.embed(texts, options);
        },
      },
    };
    const actor: Actor = { tenantId: t.tenantId, keyId: null, scopes: new Set(['write']) };
    const slow = await storeInCore(core, actor, {
      agentId: 'a',
      content: 'The slow turn, embedded while another joined.',
      anchor: { anchorExternalId: 'racer' },
      sessionId: session,
    });
    const quick = await (interloper as Promise<string>);
    expect(await hasWindow(api.core, quick)).toBe(true);
    // Built from the first turn, which is no longer the memory before it: not kept.
    expect(await hasWindow(api.core, slow.memory.id)).toBe(false);
  });

  it('clears the window of the memory after a deleted one, and reembed fills it from the one now before it', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const subject = { agent_id: 'a', anchor_external_id: 'eraser' };
    const { ids } = await conversation(api, t.auth, subject, TURNS);
    const [first, second, third] = ids as [string, string, string];
    const res = await api.http.delete(`/v1/memories/${second}`).set(t.auth);
    expect(res.status).toBe(204);
    // Nothing of the deleted text stays in a vector: the window that read it is gone.
    expect(await hasWindow(api.core, third)).toBe(false);
    expect(await hasWindow(api.core, first)).toBe(false);

    // Memories stored before migration 0008 have no window either.
    const older = await conversation(api, t.auth, { ...subject, anchor_external_id: 'older' }, TURNS);
    await sql`UPDATE memories SET window_embedding = NULL WHERE id = ANY(${older.ids}::uuid[])`.execute(api.core.db);

    const { reembedded, windows } = await reembedMemories({ db: api.core.db }, embedder, { batchSize: 1 });
    expect(reembedded).toBe(0);
    // Other tests' memories may be filled too; these three are.
    expect(windows).toBeGreaterThanOrEqual(3);
    const [d3] = await windowDistances(api.core, [third], windowText(TURNS[0] ?? '', TURNS[2] ?? ''));
    expect(d3).toBeCloseTo(0, 6);
    const refilled = await windowDistances(api.core, older.ids, windowText(TURNS[0] ?? '', TURNS[1] ?? ''));
    expect(refilled[0]).toBeNull();
    expect(refilled[1]).toBeCloseTo(0, 6);
    expect(await reembedMemories({ db: api.core.db }, embedder)).toEqual({ reembedded: 0, windows: 0, concepts: 0 });
  });

  it('ranks a reply by what it answers, blended by windowSemanticShare', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const subject = { agent_id: 'a', anchor_external_id: 'reader' };
    const { ids } = await conversation(api, t.auth, subject, [
      'Which novel by Saramago did you read on the train?',
      'Blindness, twice over.',
      'The weather was grey all week.',
      'Grey skies again today.',
    ]);
    const reply = ids[1] as string;
    const query = { ...subject, query: 'Saramago novel read on the train', limit: 4 };
    const semanticOf = async () =>
      (await recall(api, t.auth, query)).find((r) => r.id === reply)?.score_details.semantic;
    const blended = await semanticOf();
    const saved = FUSION.windowSemanticShare;
    FUSION.windowSemanticShare = 0;
    try {
      const alone = await semanticOf();
      expect(blended).toBeGreaterThan((alone ?? 0) + 0.1);
    } finally {
      FUSION.windowSemanticShare = saved;
    }
  });
});
