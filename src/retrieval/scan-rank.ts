import type { CandidateRow } from './queries/candidates.js';
import type { Bm25Parameters } from '../db/fulltext.js';
import type { ScannedMemory } from './queries/scope-read.js';

/**
 * A small part of the scope, read whole (src/retrieval/queries/scope-read.ts), ranked in process: the same
 * candidates, with the same scores, as the lookup statement (src/retrieval/queries/candidates.ts) finds with its
 * index lookups, except that every memory's BM25 is exact (the lexical budget bounds only lookups).
 * For a few hundred memories this costs microseconds, where doing it in SQL (window functions,
 * joins of materialized CTEs) cost more than reading the rows.
 */

export interface ScanRanking {
  /** The part's active memories and their summed length in distinct lexemes (the counters'). */
  docs: number;
  totalLen: number;
  /** Each query term's document frequency in the part, by k (df[k - 1]). */
  df: readonly number[];
  bm25: Bm25Parameters;
  /** Share of its idf that a query term held only among a memory's concepts counts for (FUSION.conceptShare). */
  conceptShare: number;
  /** Share of the previous memory's BM25 that counts toward a memory's (FUSION.previousLexicalShare). */
  previousLexicalShare: number;
  /** How many memories each side brings: nearest by distance, best by contextual BM25. */
  vectorDepth: number;
  lexicalDepth: number;
}

/** Okapi BM25's idf, as src/db/fulltext.ts (bm25Idf) writes it in SQL. */
const idfOf = (df: number, n: number): number => Math.log(1 + (n - df + 0.5) / (df + 0.5));

/** Ids in the order Postgres sorts uuids (their lowercase text): ties of score or distance break alike. */
const byId = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export function rankScanned(memories: readonly ScannedMemory[], r: ScanRanking): CandidateRow[] {
  const n = Math.max(0, r.docs);
  const avgLen = Math.max(1, r.docs > 0 ? r.totalLen / r.docs : 1);
  const idf = r.df.map((df) => idfOf(df, n));
  const { k1, b } = r.bm25;
  const lengthNorm = (len: number) => (k1 + 1) / (1 + k1 * (1 - b + (b * len) / avgLen));
  const weight = (k: number) => idf[Math.abs(k) - 1] ?? 0;

  // A memory's BM25: every query term it holds, in full when in its own words, at conceptShare
  // when only among its concepts.
  const lexical = new Map<string, number>();
  // A session's BM25 as one document: the idf of each query term some memory of it says in its own words.
  const sessionTerms = new Map<string, Set<number>>();
  for (const m of memories) {
    let held = 0;
    for (const k of m.hits ?? []) held += k > 0 ? weight(k) : weight(k) * r.conceptShare;
    lexical.set(m.id, held * lengthNorm(m.lexemes));
    if (m.session_id === null) continue;
    const own = (m.hits ?? []).filter((k) => k > 0);
    if (own.length === 0) continue;
    const terms = sessionTerms.get(m.session_id) ?? new Set<number>();
    for (const k of own) terms.add(k);
    sessionTerms.set(m.session_id, terms);
  }
  const sessionLexical = new Map(
    [...sessionTerms].map(([session, terms]) => [session, [...terms].reduce((sum, k) => sum + weight(k), 0)]),
  );

  // Session neighbours in store order; memories outside any session have none.
  const prev = new Map<string, string>();
  const next = new Map<string, string>();
  const sessions = new Map<string, ScannedMemory[]>();
  for (const m of memories) {
    if (m.session_id === null) continue;
    const list = sessions.get(m.session_id) ?? [];
    list.push(m);
    sessions.set(m.session_id, list);
  }
  for (const list of sessions.values()) {
    list.sort((x, y) => x.seq - y.seq);
    for (let i = 1; i < list.length; i++) {
      prev.set(list[i]!.id, list[i - 1]!.id);
      next.set(list[i - 1]!.id, list[i]!.id);
    }
  }
  const previousLexical = (id: string) => {
    const p = prev.get(id);
    return p === undefined ? 0 : (lexical.get(p) ?? 0);
  };
  const contextual = (id: string) => (lexical.get(id) ?? 0) + r.previousLexicalShare * previousLexical(id);

  const nearest = [...memories]
    .sort((x, y) => x.distance - y.distance || byId(x.id, y.id))
    .slice(0, r.vectorDepth)
    .map((m) => m.id);
  const lexicalBest = memories
    .map((m) => ({ id: m.id, score: contextual(m.id) }))
    .filter((x) => x.score > 0)
    .sort((x, y) => y.score - x.score || byId(x.id, y.id))
    .slice(0, r.lexicalDepth)
    .map((x) => x.id);
  // The session neighbours of the vector candidates are candidates too.
  const candidates = new Set([...nearest, ...lexicalBest]);
  for (const id of nearest) {
    for (const neighbour of [prev.get(id), next.get(id)]) if (neighbour !== undefined) candidates.add(neighbour);
  }
  // Returned: each candidate, and each session neighbour of a candidate for its distance.
  const needed = new Set(candidates);
  for (const id of candidates) {
    for (const neighbour of [prev.get(id), next.get(id)]) if (neighbour !== undefined) needed.add(neighbour);
  }

  const rows: CandidateRow[] = [];
  for (const m of memories) {
    if (!needed.has(m.id)) continue;
    const candidate = candidates.has(m.id);
    rows.push({
      id: m.id,
      candidate,
      lexical: candidate ? (lexical.get(m.id) ?? 0) : 0,
      previous_lexical: candidate ? previousLexical(m.id) : 0,
      session_lexical: candidate && m.session_id !== null ? (sessionLexical.get(m.session_id) ?? 0) : 0,
      prev_id: candidate ? (prev.get(m.id) ?? null) : null,
      next_id: candidate ? (next.get(m.id) ?? null) : null,
      distance: m.distance,
      binding: m.binding,
      session_id: m.session_id,
      confidence: m.confidence,
      decay_rate: m.decay_rate,
      last_reinforced_ms: m.last_reinforced_ms,
      recent_ms: m.recent_ms,
      metadata_speaker: m.metadata_speaker,
      head: m.head,
      lexemes: m.lexemes,
    });
  }
  return rows;
}
