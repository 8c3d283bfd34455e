import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { FUSION } from '../../src/retrieval/fusion.js';
import { conceptsOf } from '../../src/text/concepts.js';
import { engine, newTenant, testApi } from '../helpers/harness.js';
import { lexicalScores } from '../helpers/lexical-scores.js';
import { recall, storeMemory } from '../helpers/store-recall.js';

/**
 * Concepts (migration 0010): a memory stores the kinds its nouns are of, its full-text vector holds
 * them below its own words, and recall counts a query term held only as a kind at
 * FUSION.conceptShare of its idf, in both candidate statements.
 */
const VIOLIN = 'I spent the evening playing my violin.';
const SHOP = 'The instrument shop on the corner closed.';

async function withShare<T>(share: number, run: () => Promise<T>): Promise<T> {
  const saved = FUSION.conceptShare;
  FUSION.conceptShare = share;
  try {
    return await run();
  } finally {
    FUSION.conceptShare = saved;
  }
}

describe(`concepts on ${engine}`, () => {
  it('are stored with a memory and indexed at weight D, its own words at A', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const id = await storeMemory(api, t.auth, { agent_id: 'a', content: VIOLIN });
    const { rows } = await sql<{ concepts: string; kind: boolean; own: boolean; word: boolean }>`
      SELECT concepts, search @@ 'instrument'::tsquery AS kind, search @@ 'instrument:A'::tsquery AS own,
        search @@ 'violin:A'::tsquery AS word
      FROM memories WHERE id = ${id}::uuid`.execute(api.core.db);
    expect(rows[0]).toEqual({ concepts: conceptsOf(VIOLIN), kind: true, own: false, word: true });
    expect(rows[0]?.concepts).toContain('musical instrument');
  });

  it('count a term held only as a kind at conceptShare of its weight, in both statements', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const violin = await storeMemory(api, t.auth, { agent_id: 'a', content: VIOLIN });
    const shop = await storeMemory(api, t.auth, { agent_id: 'a', content: SHOP });
    for (const content of ['We had pasta for dinner.', 'The train was late again.', 'My sister lives in Lisbon.']) {
      await storeMemory(api, t.auth, { agent_id: 'a', content });
    }
    const lexical = await lexicalScores(api, t.tenantId, 'instruments');
    const at = (share: number) => withShare(share, () => lexicalScores(api, t.tenantId, 'instruments'));
    const [none, full] = [await at(0), await at(1)];
    for (const statement of ['scan', 'lookup'] as const) {
      // The violin memory says no word of the query: it scores by its kind alone, linearly in the share.
      expect(lexical[statement].get(violin)).toBeGreaterThan(0);
      // At no share it scores nothing (and the lookup statement, given no vector candidates, leaves it out).
      expect(none[statement].get(violin) ?? 0).toBe(0);
      expect(full[statement].get(violin)).toBeCloseTo(2 * (lexical[statement].get(violin) ?? 0), 9);
      // The shop memory says the word itself: the share does not touch it.
      expect(none[statement].get(shop)).toBeCloseTo(lexical[statement].get(shop) ?? -1, 9);
      expect(full[statement].get(shop)).toBeCloseTo(lexical[statement].get(shop) ?? -1, 9);
    }
    // The memories that hold a query term, as words or as kinds, score alike in both.
    const holding = (m: Map<string, number>) => [...m.entries()].filter(([, v]) => v > 0).sort();
    expect(holding(lexical.lookup)).toEqual(holding(lexical.scan));

    const recalled = await recall(api, t.auth, { agent_id: 'a', query: 'What instruments does she play?', limit: 5 });
    expect(recalled.find((r) => r.id === violin)?.score_details.lexical).toBeGreaterThan(0);
  });
});
