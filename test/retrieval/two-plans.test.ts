import { describe, expect, it } from 'vitest';
import type { CandidateRow } from '../../src/retrieval/queries/candidates.js';
import { upsertAnchor } from '../../src/domain/subjects/anchors.js';
import { candidatesQuery } from '../../src/retrieval/queries/candidates.js';
import { vectorNeighbours } from '../../src/retrieval/queries/nearest.js';
import type { RecallScope } from '../../src/retrieval/queries/scope.js';
import { scanPart } from '../../src/retrieval/recall.js';
import { engine, newTenant, testApi } from '../helpers/harness.js';
import { subjectStats } from '../helpers/lexical-scores.js';
import { startSession, storeMemory } from '../helpers/store-recall.js';

/**
 * A scope is ranked in one of two ways, by its size (PREPARED_SCOPE_MAX): a small scope is read whole
 * and ranked in process, a large one by bounded lookups. On a scope small enough that the lookups' budget
 * reaches every memory, both must give every candidate the same scores, so that a subject's ranking
 * does not change as it grows past the threshold.
 */
const SESSIONS: string[][] = [
  [
    'Ana: I adopted a grey cat called Pixel yesterday.',
    'Ben: Lovely! How long have you wanted a cat?',
    'Ana: For about two years, since I moved to Porto.',
    'Ben: I started learning the cello last month.',
    'Ana: Wow, cool!',
  ],
  [
    'Ben: I played my first cello recital on Saturday.',
    'Ana: Pixel knocked my coffee off the table again.',
    'Ben: My sister teaches chemistry in Lisbon.',
  ],
  ['Ana: The garden has tomatoes and peppers this summer.', 'Ben: We booked a cabin near the lake in August.'],
];
const QUERIES = ['When did Ana adopt her cat?', 'What instrument does Ben play?', 'Where does the sister teach?'];

/** What fusion reads of a candidate row, rounded past floating-point summation order. */
const view = (r: CandidateRow) => ({
  candidate: r.candidate,
  lexical: r.lexical.toFixed(9),
  previous_lexical: r.previous_lexical.toFixed(9),
  session_lexical: r.session_lexical.toFixed(9),
  distance: r.distance.toFixed(6),
  prev_id: r.prev_id,
  next_id: r.next_id,
  lexemes: r.lexemes,
  head: r.head,
});

describe(`the two candidate statements on ${engine}`, () => {
  it('give the same candidates with the same scores on a small scope', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    for (const turns of SESSIONS) {
      const session = await startSession(api, t.auth, { agent_id: 'a', anchor_external_id: 'pair' });
      for (const content of turns) {
        await storeMemory(api, t.auth, { agent_id: 'a', content, session_id: session, anchor_external_id: 'pair' });
      }
    }
    // A private memory, outside any session: no neighbours and no session score.
    await storeMemory(api, t.auth, { agent_id: 'a', content: 'Ana prefers tea to coffee since last winter' });
    const { core } = api;
    const anchor = await upsertAnchor(core.db, t.tenantId, core.clock(), { externalId: 'pair' });
    const scope: RecallScope = {
      tenantId: t.tenantId,
      agentId: 'a',
      anchorId: anchor.id,
      sessionId: null,
      includeSuperseded: false,
    };
    const stats = await subjectStats(core, scope);
    expect(stats.docs).toBe(11);
    const dims = core.embedder.dimensions;
    // A depth below the scope's size, so that both sides choose.
    const depth = 4;
    let withSessionScore = 0;
    for (const text of QUERIES) {
      const [embedding] = await core.embedder.embed([text], { kind: 'query' });
      const query = embedding as Float32Array;
      const part = {
        db: core.db,
        dimensions: dims,
        scope,
        part: 'subject' as const,
        stats,
        text,
        embedding: query,
        depth,
      };
      const scanned = await scanPart(part);
      const nearest = await vectorNeighbours({ ...part, plan: 'exact' });
      const looked = (await candidatesQuery({ ...part, nearest: nearest.map((n) => n.id) }).execute(core.db)).rows;
      const byId = (rows: CandidateRow[]) =>
        Object.fromEntries([...rows].sort((a, b) => a.id.localeCompare(b.id)).map((r) => [r.id, view(r)]));
      expect(byId(looked), text).toEqual(byId(scanned));
      withSessionScore += scanned.filter((r) => r.candidate && r.session_lexical > r.lexical).length;
    }
    // The session score reaches memories beyond the words they hold themselves.
    expect(withSessionScore).toBeGreaterThan(0);
  });
});
