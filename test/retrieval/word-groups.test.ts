import { describe, expect, it } from 'vitest';
import { engine, newTenant, testApi } from '../helpers/harness.js';
import { lexicalScores } from '../helpers/lexical-scores.js';
import { recall, storeMemory } from '../helpers/store-recall.js';

/**
 * Word groups (src/text/word-groups.ts): a query word matches every word of its group, as one term
 * whose document frequency is the sum of its words', in both candidate statements.
 */
describe(`word groups on ${engine}`, () => {
  it('match a query word with its other forms, as one term of summed frequency', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const went = await storeMemory(api, t.auth, { agent_id: 'a', content: 'We went to Lisbon for a week.' });
    const go = await storeMemory(api, t.auth, { agent_id: 'a', content: 'I go swimming on Sundays.' });
    const lisbon = await storeMemory(api, t.auth, { agent_id: 'a', content: 'Lisbon has steep streets.' });
    for (const content of ['We had pasta for dinner.', 'The train was late again.', 'My sister plays chess.']) {
      await storeMemory(api, t.auth, { agent_id: 'a', content });
    }
    const byGo = await lexicalScores(api, t.tenantId, 'go');
    const byWent = await lexicalScores(api, t.tenantId, 'went');
    // "Lisbon" is held by two memories, as the group go/went/gone is: one idf.
    const byLisbon = await lexicalScores(api, t.tenantId, 'Lisbon');
    for (const statement of ['scan', 'lookup'] as const) {
      expect(byGo[statement].get(went)).toBeGreaterThan(0);
      expect(byWent[statement].get(go)).toBeGreaterThan(0);
      // Either form of the query is the same term: every memory scores alike.
      expect([...byWent[statement].entries()].sort()).toEqual([...byGo[statement].entries()].sort());
      // Its frequency is the sum of its forms' (2), not the rarest one's (1).
      expect(byGo[statement].get(went)).toBeCloseTo(byLisbon[statement].get(went) ?? -1, 9);
      expect(byGo[statement].get(lisbon) ?? 0).toBe(0);
    }

    const recalled = await recall(api, t.auth, { agent_id: 'a', query: 'When did we go to Lisbon?', limit: 3 });
    expect(recalled[0]?.id).toBe(went);
  });

  it("match a verb's inflections and a word's colloquial equals", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const went = await storeMemory(api, t.auth, { agent_id: 'a', content: 'We went to Lisbon for a week.' });
    const kids = await storeMemory(api, t.auth, { agent_id: 'a', content: 'The kids love the beach.' });
    await storeMemory(api, t.auth, { agent_id: 'a', content: 'My sister plays chess.' });
    const byGoing = await lexicalScores(api, t.tenantId, 'going');
    const byChildren = await lexicalScores(api, t.tenantId, 'children');
    const matched = (scores: Map<string, number>) => [...scores].filter(([, score]) => score > 0).map(([id]) => id);
    for (const statement of ['scan', 'lookup'] as const) {
      expect(matched(byGoing[statement])).toEqual([went]);
      expect(matched(byChildren[statement])).toEqual([kids]);
    }
  });
});
