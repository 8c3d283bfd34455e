import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { FUSION } from '../../src/retrieval/fusion.js';
import { engine, manualClock, newTenant, testApi } from '../helpers/harness.js';
import { ids, recall, startSession, storeMemory, writeCanon, type RecalledMemory } from '../helpers/store-recall.js';

const DAY = 86_400_000;
const canonOf = (results: RecalledMemory[]) => results.filter((r) => r.binding === 'canon');

describe(`recall ranking on ${engine}`, () => {
  it('ranks by score, highest first, and explains each score with parts in [0, 1]', async () => {
    const clock = manualClock();
    const api = await testApi({ clock });
    const t = await newTenant(api);
    const anchored = await storeMemory(api, t.auth, {
      agent_id: 'agent-1',
      content: 'The customer wants invoices sent by email',
      anchor_external_id: 'cust',
    });
    clock.advance(7 * DAY);
    const session = await startSession(api, t.auth, { agent_id: 'agent-1', anchor_external_id: 'cust' });
    const inSession = await storeMemory(api, t.auth, {
      agent_id: 'agent-1',
      content: 'Today the customer asked for a paper invoice',
      session_id: session,
    });
    await storeMemory(api, t.auth, { agent_id: 'agent-1', content: 'Invoices go out on the first of the month' });
    await storeMemory(api, t.auth, { agent_id: 'agent-1', content: 'The office plants need water on Mondays' });
    await writeCanon(api, t.auth, 'Invoices are never sent to personal addresses');

    const results = await recall(api, t.auth, {
      agent_id: 'agent-1',
      query: 'customer wants invoices sent by email',
      anchor_external_id: 'cust',
      session_id: session,
    });
    expect(results).toHaveLength(5);
    expect(results[0]?.id).toBe(anchored);
    const scores = results.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((x, y) => y - x));
    for (const r of results) {
      const { semantic, lexical, confidence, recency, prior } = r.score_details;
      for (const part of [semantic, lexical, confidence]) {
        expect(part).toBeGreaterThanOrEqual(0);
        expect(part).toBeLessThanOrEqual(1);
      }
      expect(recency).toBeGreaterThanOrEqual(1);
      // The parts are the ones the score is made of (src/retrieval/fusion.ts).
      const relevance = FUSION.semanticWeight * semantic + FUSION.lexicalWeight * lexical;
      const weight = 1 - FUSION.confidenceInfluence + FUSION.confidenceInfluence * confidence;
      expect(prior).toBeGreaterThan(0);
      expect(r.score).toBeCloseTo(relevance * prior * weight * recency, 10);
    }
    const byId = new Map(results.map((r) => [r.id, r.score_details]));
    // Anchored, reinforced a week (one half-life) ago: half the boost and decayed confidence.
    expect(byId.get(anchored)?.recency).toBeCloseTo(1 + FUSION.recencyBoost / 2, 10);
    expect(byId.get(anchored)?.confidence).toBeCloseTo(0.7 * Math.exp(-0.02 * 7), 10);
    expect(byId.get(inSession)?.recency).toBeCloseTo(1 + FUSION.recencyBoost, 10);
    for (const r of results.filter((x) => x.binding === 'private' || x.binding === 'canon')) {
      expect(r.score_details.recency).toBe(1);
    }
  });

  it('gives canon at most max(1, floor(limit × 0.3)) of the results', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const canon: string[] = [];
    for (let i = 1; i <= 10; i++)
      canon.push(await writeCanon(api, t.auth, `Shipping rule ${i}: parcels ship within ${i} days`));
    const q = { agent_id: 'agent-1', query: 'parcels shipping rule days' };

    // Nothing else to return: without the cap all ten would come back.
    const onlyCanon = await recall(api, t.auth, { ...q, limit: 10 });
    expect(onlyCanon).toHaveLength(3);
    expect(canon).toEqual(expect.arrayContaining(ids(onlyCanon)));

    const many: string[] = [];
    for (let i = 1; i <= 12; i++) {
      many.push(
        await storeMemory(api, t.auth, {
          agent_id: 'agent-1',
          content: `Parcel ${i} for the shipping desk took ${i} days`,
        }),
      );
    }
    const capped = await recall(api, t.auth, { ...q, limit: 10 });
    expect(capped).toHaveLength(10);
    expect(canonOf(capped).length).toBeLessThanOrEqual(3);

    // The canon entries match the query best, so at limit 2 they would take both places uncapped.
    const two = await recall(api, t.auth, { ...q, query: 'shipping rule parcels ship within days', limit: 2 });
    expect(two).toHaveLength(2);
    expect(canonOf(two)).toHaveLength(1);
    expect(many).toContain(two.find((r) => r.binding !== 'canon')?.id);
  });

  it('fills the remaining places with canon when subject memories are few', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    for (let i = 1; i <= 10; i++) await writeCanon(api, t.auth, `Holiday policy ${i}: request leave ${i} weeks ahead`);
    const subject = [
      await storeMemory(api, t.auth, {
        agent_id: 'a',
        content: 'Ravi asked for holiday leave in August',
        anchor_external_id: 'ravi',
      }),
      await storeMemory(api, t.auth, {
        agent_id: 'a',
        content: 'Ravi has ten holiday days left',
        anchor_external_id: 'ravi',
      }),
    ];
    const results = await recall(api, t.auth, {
      agent_id: 'a',
      query: 'Ravi holiday leave August',
      anchor_external_id: 'ravi',
      limit: 10,
    });
    expect(results).toHaveLength(5);
    expect(canonOf(results)).toHaveLength(3);
    expect(ids(results.slice(0, 2)).sort()).toEqual([...subject].sort());
  });

  it('finds a memory that matches only one of the query words', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const parrot = await storeMemory(api, t.auth, { agent_id: 'a', content: 'Kiwi the parrot learned to whistle' });
    for (const content of ['The car needs new tyres', 'Lunch is served at noon', 'The printer is out of toner']) {
      await storeMemory(api, t.auth, { agent_id: 'a', content });
    }
    const query = 'parrot vacation budget spreadsheet';
    // Proof that the test can fail: an AND of the terms (plainto_tsquery) does not match it.
    const and = await sql<{ hit: boolean }>`SELECT to_tsvector('english', 'Kiwi the parrot learned to whistle')
      @@ plainto_tsquery('english', ${query}) AS hit`.execute(api.core.db);
    expect(and.rows[0]?.hit).toBe(false);

    const results = await recall(api, t.auth, { agent_id: 'a', query });
    expect(results[0]?.id).toBe(parrot);
    expect(results[0]?.score_details.lexical).toBe(1);
    expect(results.slice(1).map((r) => r.score_details.lexical)).toEqual([0, 0, 0]);

    // A query of stop words has no lexemes at all: the vector side still answers.
    const stopWords = await recall(api, t.auth, { agent_id: 'a', query: 'the and of' });
    expect(stopWords).toHaveLength(4);
    expect(stopWords.map((r) => r.score_details.lexical)).toEqual([0, 0, 0, 0]);
  });

  it('matches query lexemes that contain "&", such as URLs with parameters', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const url = 'https://wiki.example.com/setup?step=2&lang=en';
    const exact = await storeMemory(api, t.auth, { agent_id: 'a', content: `Setup guide: ${url} is outdated` });
    const host = await storeMemory(api, t.auth, { agent_id: 'a', content: 'The wiki.example.com front page is fine' });
    const results = await recall(api, t.auth, { agent_id: 'a', query: url });
    const lexical = new Map(results.map((r) => [r.id, r.score_details.lexical]));
    // Both share the host lexeme; only the first holds the whole URL and its path, which contain '&'.
    expect(lexical.get(exact)).toBe(1);
    expect(lexical.get(host)).toBeGreaterThan(0);
    expect(lexical.get(host)).toBeLessThan(1);
  });

  it('honours limit, with 10 by default', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    for (let i = 0; i < 15; i++)
      await storeMemory(api, t.auth, { agent_id: 'a', content: `Meeting note number ${i} about budgets` });
    const q = { agent_id: 'a', query: 'meeting note budgets' };
    expect(await recall(api, t.auth, { ...q, limit: 5 })).toHaveLength(5);
    expect(await recall(api, t.auth, { ...q, limit: 1 })).toHaveLength(1);
    expect(await recall(api, t.auth, q)).toHaveLength(10);
    expect(await recall(api, t.auth, { ...q, limit: 100 })).toHaveLength(15);
  });
});
