import { describe, expect, it } from 'vitest';
import type { ScannedMemory } from '../../src/retrieval/queries/scope-read.js';
import { rankScanned } from '../../src/retrieval/scan-rank.js';

/**
 * The in-process ranking of a part read whole, on a hand-made part. test/retrieval/two-plans.test.ts
 * checks it against the lookup statement on a real database; this pins what it returns beside the
 * candidates and how it breaks ties.
 */
const id = (c: string) => `00000000-0000-0000-0000-00000000000${c}`;
const memory = (c: string, session: string | null, seq: number, distance: number, hits: number[] | null) =>
  ({
    id: id(c),
    seq,
    distance,
    hits,
    binding: 'private',
    session_id: session === null ? null : id(session),
    confidence: 1,
    decay_rate: 0,
    last_reinforced_ms: 0,
    recent_ms: 0,
    metadata_speaker: null,
    head: c,
    lexemes: 4,
  }) satisfies ScannedMemory;

// Session 1 holds a, b, c, f in store order; session 2 holds d; e is in no session. Every memory
// has the average length, so BM25 is the summed idf of the terms held.
const PART: ScannedMemory[] = [
  memory('c', '1', 3, 0.6, null),
  memory('a', '1', 1, 0.7, [1]),
  memory('f', '1', 4, 0.8, null),
  memory('d', '2', 1, 0.1, [2]),
  memory('b', '1', 2, 0.9, [-2]),
  memory('e', null, 1, 0.9, [1]),
];
const ranking = {
  docs: 6,
  totalLen: 24,
  df: [2, 2],
  bm25: { k1: 1.2, b: 0.75 },
  conceptShare: 0.5,
  previousLexicalShare: 0.5,
  vectorDepth: 1,
  lexicalDepth: 1,
};
const idf = Math.log(1 + (6 - 2 + 0.5) / (2 + 0.5));

describe('ranking a part read whole', () => {
  it('returns the candidates with their scores and context, and the session neighbours of candidates', () => {
    const rows = rankScanned(PART, ranking).sort((x, y) => x.id.localeCompare(y.id));
    // d is the nearest; a and e hold term 1 alike, and the tie goes to the lower id; b comes as a's
    // neighbour, for its distance only. c, f and e are left out.
    expect(rows.map((r) => [r.head, r.candidate])).toEqual([
      ['a', true],
      ['b', false],
      ['d', true],
    ]);
    const [a, b, d] = rows;
    expect(a).toMatchObject({ prev_id: null, next_id: id('b'), previous_lexical: 0 });
    expect(a?.lexical).toBeCloseTo(idf, 12);
    // The session says term 1 in its own words (a); b holds term 2 only among its concepts, which
    // counts for the memory but not for its session.
    expect(a?.session_lexical).toBeCloseTo(idf, 12);
    expect(b).toMatchObject({ lexical: 0, previous_lexical: 0, session_lexical: 0, prev_id: null, next_id: null });
    expect(b?.distance).toBe(0.9);
    expect(d).toMatchObject({ prev_id: null, next_id: null, distance: 0.1 });
    expect(d?.session_lexical).toBeCloseTo(idf, 12);
  });

  it("brings the vector candidates' session neighbours, with the predecessor's BM25 in part", () => {
    const rows = rankScanned(PART, { ...ranking, vectorDepth: 2 });
    const byHead = new Map(rows.map((r) => [r.head, r]));
    // c is the second nearest: its neighbours b and f become candidates, and b's predecessor is a.
    expect([...byHead.keys()].sort()).toEqual(['a', 'b', 'c', 'd', 'f']);
    for (const head of ['a', 'b', 'c', 'd', 'f']) expect(byHead.get(head)?.candidate).toBe(true);
    const b = byHead.get('b');
    expect(b?.lexical).toBeCloseTo(idf * ranking.conceptShare, 12);
    expect(b?.previous_lexical).toBeCloseTo(idf, 12);
    expect(byHead.get('c')?.previous_lexical).toBeCloseTo(idf * ranking.conceptShare, 12);
  });
});
