import { describe, expect, it } from 'vitest';
import { FUSION } from '../../src/retrieval/fusion.js';
import { engine, newTenant, testApi } from '../helpers/harness.js';
import { recall, startSession, storeMemory } from '../helpers/store-recall.js';

/**
 * The parts of the ranking that the LoCoMo evaluation measured (docs/benchmarks.md), each shown on a
 * case built so that the ranking without that part gets it wrong.
 */
describe(`ranking features on ${engine}`, () => {
  it('weighs a rare query term far above one that every memory holds (BM25 idf over the scope)', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const rare = await storeMemory(api, t.auth, { agent_id: 'a', content: 'Moved to Lisbon last spring' });
    // "customer" is in every other memory, several times in this one: term frequency would favour it.
    const common = await storeMemory(api, t.auth, {
      agent_id: 'a',
      content: 'The customer said the customer account of the customer is fine',
    });
    for (const topic of ['billing', 'shipping', 'returns', 'warranty', 'discounts', 'gift cards', 'loyalty points']) {
      await storeMemory(api, t.auth, { agent_id: 'a', content: `The customer asked about ${topic}` });
    }
    const results = await recall(api, t.auth, { agent_id: 'a', query: 'customer Lisbon' });
    const lexical = new Map(results.map((r) => [r.id, r.score_details.lexical]));
    expect(lexical.get(rare)).toBe(1);
    // idf: ln(1 + (9 − 8 + 0.5) / (8 + 0.5)) ≈ 0.16 against ln(1 + 8.5 / 1.5) ≈ 1.9 for Lisbon.
    expect(lexical.get(common)).toBeGreaterThan(0);
    expect(lexical.get(common)).toBeLessThan(0.15);
    // The vector side likes the wordy one; the lexical side still lifts the rare term into the top two.
    expect(results.slice(0, 2).map((r) => r.id)).toContain(rare);
  });

  it('finds a reply that holds the answer through the question just before it in the session', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const session = await startSession(api, t.auth, { agent_id: 'a', anchor_external_id: 'pair' });
    // Speakers as metadata, so that no name in the content matches the query.
    const turns: [speaker: string, text: string][] = [
      ['Caroline', 'I adopted a puppy from the shelter on Sunday.'],
      ['Melanie', 'How long have you and Jonas been married?'],
      ['Caroline', 'Seven years this June, and still happy.'],
      ['Melanie', 'Are you going to the concert downtown?'],
      ['Caroline', 'No, tickets sold out before I could buy any.'],
      ['Melanie', 'My garden finally has tomatoes and peppers.'],
      ['Caroline', 'The bakery on Elm street closed for good.'],
      ['Melanie', 'I painted the kitchen a pale yellow colour.'],
      ['Caroline', 'Work has been busy with quarterly reports.'],
      ['Melanie', 'We booked a cabin near the lake for August.'],
    ];
    const ids: string[] = [];
    for (const [speaker, content] of turns) {
      ids.push(await storeMemory(api, t.auth, { agent_id: 'a', content, session_id: session, metadata: { speaker } }));
    }
    const reply = ids[2] as string;

    const results = await recall(api, t.auth, {
      agent_id: 'a',
      query: 'How long have Caroline and Jonas been married?',
      anchor_external_id: 'pair',
      session_id: session,
      limit: 3,
    });
    const found = results.find((r) => r.id === reply);
    // The reply holds no query term of its own; its lexical part is the question's share (and the
    // session's, which the question has too), below the question's own.
    expect(found).toBeDefined();
    expect(found?.score_details.lexical).toBeGreaterThan(0);
    const question = results.find((r) => r.id === ids[1]);
    expect(found?.score_details.lexical).toBeLessThan(question?.score_details.lexical ?? 0);
  });

  it('ranks what the named speaker said above what another said about the same thing', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const subject = { agent_id: 'a', anchor_external_id: 'friends' };
    // One opinion each, in two partitions (anchored, session) so that the store path keeps both.
    const caroline = await storeMemory(api, t.auth, {
      ...subject,
      content: 'I think the pottery class was fun',
      metadata: { speaker: 'Caroline' },
    });
    const session = await startSession(api, t.auth, subject);
    const melanie = await storeMemory(api, t.auth, {
      agent_id: 'a',
      session_id: session,
      content: 'I think the pottery class was great fun',
      metadata: { speaker: 'Melanie' },
    });
    for (const content of ['The train leaves at noon', 'Rent is due on the first', 'The cat sleeps all day']) {
      await storeMemory(api, t.auth, { ...subject, content });
    }
    const top = async (query: string) =>
      (await recall(api, t.auth, { ...subject, session_id: session, query, limit: 2 })).map((r) => r.id);
    // The names are in no content: only the speaker field can tell the two apart, either way round.
    expect(await top('What did Caroline think of the pottery class?')).toEqual([caroline, melanie]);
    expect(await top('What did Melanie think of the pottery class?')).toEqual([melanie, caroline]);
    const named = await recall(api, t.auth, { ...subject, session_id: session, query: 'Did Caroline like pottery?' });
    const other = named.find((r) => r.id === melanie)?.score_details;
    expect(other?.lexical).toBeLessThanOrEqual(1 - FUSION.otherSpeakerPenalty + 1e-9);
    expect(other?.semantic).toBeLessThanOrEqual(1 - FUSION.otherSpeakerPenalty + 1e-9);
  });
});
