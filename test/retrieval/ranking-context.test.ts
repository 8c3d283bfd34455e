import { describe, expect, it } from 'vitest';
import { contextualSimilarity, FUSION, priorFactor } from '../../src/retrieval/fusion.js';
import { asksAboutTime, statesTime } from '../../src/retrieval/time-cue.js';
import { engine, newTenant, testApi } from '../helpers/harness.js';
import { recall, startSession, storeMemory } from '../helpers/store-recall.js';

/**
 * The parts of the ranking that look past a memory's own words (docs/benchmarks.md): its session as
 * one document, a time question's cue, and the length prior.
 */
describe(`ranking by context on ${engine}`, () => {
  it("gives a memory a share of its session's BM25 when it holds no query term itself", async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const subject = { agent_id: 'a', anchor_external_id: 'pair' };
    const turnsOf = async (turns: string[]) => {
      const session = await startSession(api, t.auth, subject);
      const ids: string[] = [];
      for (const content of turns)
        ids.push(await storeMemory(api, t.auth, { ...subject, session_id: session, content }));
      return ids;
    };
    // The answer comes first in its session: no turn before it lends it a share.
    const [answer] = await turnsOf(['Grace was the star of the evening.', 'We went to the violin recital downtown.']);
    const [elsewhere] = await turnsOf(['Grace was the star of the market.', 'The bakery closed early today.']);
    const results = await recall(api, t.auth, { ...subject, query: 'Who was at the violin recital?', limit: 4 });
    const lexical = new Map(results.map((r) => [r.id, r.score_details.lexical]));
    // Neither holds a query term ("violin", "recital"); only the answer's session does.
    expect(lexical.get(answer as string)).toBeGreaterThan(0);
    expect(lexical.get(elsewhere as string) ?? 0).toBe(0);
    expect(results.map((r) => r.id).indexOf(answer as string)).toBeLessThan(
      results.map((r) => r.id).indexOf(elsewhere as string) >>> 0,
    );
  });

  it('lifts a memory that states a time for a question about time, and only then', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const subject = { agent_id: 'a', anchor_external_id: 'ana' };
    const when = await storeMemory(api, t.auth, { ...subject, content: 'Ana moved to Porto two years ago.' });
    const what = await storeMemory(api, t.auth, { ...subject, content: 'Ana moved to Porto with her old cat.' });
    const timed = await recall(api, t.auth, { ...subject, query: 'When did Ana move to Porto?' });
    const prior = new Map(timed.map((r) => [r.id, r.score_details.prior]));
    expect((prior.get(when) ?? 0) / (prior.get(what) ?? 1)).toBeGreaterThan(1 + FUSION.timeCueBoost / 2);
    expect(timed[0]?.id).toBe(when);
    const untimed = await recall(api, t.auth, { ...subject, query: 'Did Ana move to Porto with a cat?' });
    const priors = untimed.map((r) => r.score_details.prior);
    // No time asked: the prior is the length prior alone, below 1 and above 1 − its weight.
    for (const p of priors) expect(p).toBeGreaterThan(1 - FUSION.lengthPriorWeight);
    for (const p of priors) expect(p).toBeLessThan(1);
    expect(untimed[0]?.id).toBe(what);
  });

  it('tells a question about time from one that is not, and weighs context and length', () => {
    for (const q of [
      'When did Caroline go to the parade?',
      'How long has Mel been married?',
      'Which year did they meet?',
    ])
      expect(asksAboutTime(q), q).toBe(true);
    expect(asksAboutTime('Where was Caroline in June 2023?')).toBe(true);
    for (const q of ['What instrument does Ben play?', 'Who supports Caroline?', 'What may Ana adopt?'])
      expect(asksAboutTime(q), q).toBe(false);
    for (const t of ['We met two years ago.', 'Since 2016, yes', 'See you on Saturday!', 'It was last summer.'])
      expect(statesTime(t), t).toBe(true);
    // A date stamp alone is no time expression: every memory of a store might carry one.
    for (const t of ['Lovely! (8 May 2023)', 'I may go, says the timetable.']) expect(statesTime(t), t).toBe(false);
    // A memory's similarity takes a share of its better neighbour's and of the best in its session.
    const alone = contextualSimilarity({ distance: 0.6, neighbourDistances: [], sessionDistance: null });
    const inSession = contextualSimilarity({ distance: 0.6, neighbourDistances: [0.8], sessionDistance: 0.2 });
    expect(inSession - alone).toBeCloseTo(FUSION.neighbourSemanticShare * 0.2 + FUSION.sessionSemanticShare * 0.8, 10);
    // The length prior grows with the memory's length, from 1 − w towards 1.
    const short = priorFactor({ lexemes: 2, timeCue: false });
    const long = priorFactor({ lexemes: 20, timeCue: false });
    expect(short).toBeLessThan(long);
    expect(long).toBeLessThan(1);
    expect(priorFactor({ lexemes: 0, timeCue: false })).toBeCloseTo(1 - FUSION.lengthPriorWeight, 10);
  });
  it('reads a time expression of every kind a temporal annotator names, and leaves words that only look like one', () => {
    // One sentence per kind of src/retrieval/time-cue.ts, written from English grammar, none taken
    // from an evaluation's turns.
    const timed = {
      relative: ['I saw her the other day.', 'We moved here a while back.', 'I will call you soon.'],
      anchored: ['See you next Tuesday!', 'The shop opens every morning.', 'We met up last sat.'],
      duration: ['I have lived here for fifteen years.', 'It took a couple of weeks.', 'We talked for ages.'],
      weekday: ['The market is on Thursdays.'],
      calendar: [
        'Back in 2015 I ran a bakery.',
        'I grew up in the 90s.',
        'Rent is due on the 3rd.',
        'Since Sept I work nights.',
      ],
      date: ['My exam is on June 12th.', 'We married on 5 October.', 'Her party is on the 2nd of March.'],
      season: ['We hike a lot in the fall.', 'I worked at a camp over the summer.'],
      holiday: ['We always travel at Thanksgiving.', "I quit on New Year's Eve."],
      clock: ['The train leaves at 7:45 pm.', 'Lunch is at noon.'],
      frequency: ['I swim twice a week.', 'The club meets monthly.'],
      lifetime: ['I learned to sail when I was a kid.', 'I played cello in high school.'],
      occasion: ['It was the first time I flew alone.', 'He gave me a bike for my birthday.'],
    };
    for (const [kind, texts] of Object.entries(timed))
      for (const t of texts) expect(statesTime(t), `${kind}: ${t}`).toBe(true);
    for (const t of [
      'I love the sun on my face.',
      'We sat by the fire and talked.',
      'I had 3 of them, then 2 in the box.',
      'Call me at 555 0100.',
      'That recipe is my favourite.',
      'Released 12 March 2021, says the label.',
    ])
      expect(statesTime(t), t).toBe(false);
    for (const q of ['At what age did she learn to swim?', 'How often does Ben run?', 'Which decade was it built in?'])
      expect(asksAboutTime(q), q).toBe(true);
  });
});
