import { DAY_MS } from '../domain/time.js';
import type { Binding } from '../vocabulary.js';

/**
 * How candidates become a ranking. Each number was chosen on the three LoCoMo dev conversations
 * (recall@10 of the evidence turns; docs/benchmarks.md) and nowhere else, so that conversations
 * never seen measure the ranking honestly.
 *
 * Min-max normalized score fusion beats reciprocal rank fusion when the dense side is weak
 * (DESIGN §3). The lexical side is BM25 over the caller's scope (src/db/fulltext.ts).
 */
export interface Fusion {
  semanticWeight: number;
  lexicalWeight: number;
  bm25: { k1: number; b: number };
  previousLexicalShare: number;
  conceptShare: number;
  sessionLexicalShare: number;
  windowSemanticShare: number;
  neighbourSemanticShare: number;
  sessionSemanticShare: number;
  otherSpeakerPenalty: number;
  timeCueBoost: number;
  lengthPriorWeight: number;
  lengthPriorHalf: number;
  confidenceInfluence: number;
  recencyBoost: number;
  recencyHalfLifeDays: number;
}

export const FUSION: Fusion = {
  semanticWeight: 0.5,
  lexicalWeight: 0.5,
  /** BM25 parameters, the usual ones. */
  bm25: { k1: 1.2, b: 0.75 },
  /**
   * Share of the lexical score of the memory stored just before it, in the same session, that a
   * memory adds to its own: a reply ("Yes, for four years now") holds the answer while the turn before
   * it holds the words of the question ("How long have you known them?").
   */
  previousLexicalShare: 0.5,
  /**
   * Share of its idf that a query term counts for when a memory holds it only among its concepts (the
   * kinds its nouns are of, src/text/concepts.ts): "violin" is evidence for "instruments", but weaker
   * than the word itself. Half, as the turn before lends half: context, not the memory's own words.
   */
  conceptShare: 0.5,
  /**
   * Share of its session's BM25, the session taken as one document (the idf of every query term some
   * memory of the session holds), that a memory adds to its own: a conversation answers a question
   * over several turns, and the turn that holds the answer often shares no word with the question.
   * The same share as the turn before lends: both are the context the turn was said in.
   */
  sessionLexicalShare: 0.5,
  /**
   * A session memory's distance to the query is its own blended with its window vector's (its text
   * embedded after the memory before it, migration 0008) by this share: a reply means what it
   * answers. Half and half: neither reading of a turn is the better one in general.
   */
  windowSemanticShare: 0.5,
  /**
   * Share of the better similarity of its two session neighbours that a memory adds to its own. Small,
   * since the window vector already reads the memory before it.
   */
  neighbourSemanticShare: 0.1,
  /**
   * Share of the best similarity among the other memories of its session that recall has read (the
   * candidates and their neighbours) that a memory adds to its own: a session that is about the
   * question holds more of its answer than the turns that say so in its words.
   */
  sessionSemanticShare: 0.1,
  /**
   * When the query names a speaker of the candidates, memories said by someone else lose this share
   * of their relevance (src/text/speakers.ts). Memories without a speaker are left alone.
   */
  otherSpeakerPenalty: 0.3,
  /**
   * When the query asks about time (src/retrieval/time-cue.ts), memories that state a time ("last
   * week", "two years ago", "since 2016") gain this share of their relevance: the answer to "when" or
   * "how long" is a time expression, which the question cannot name.
   */
  timeCueBoost: 0.2,
  /**
   * Short memories ("Wow, cool!") seldom hold evidence: relevance is weighted by
   * 1 − w + w × len / (len + half), len the memory's distinct lexemes; this is w.
   */
  lengthPriorWeight: 0.2,
  /** The length (distinct lexemes) at which the length prior gives half its weight. */
  lengthPriorHalf: 8,
  /** Share of the score that effective confidence can take away: 0.5 halves a memory at confidence 0. */
  confidenceInfluence: 0.5,
  /** Session and anchored memories get up to this much extra when just reinforced, fading by half-life. */
  recencyBoost: 0.1,
  recencyHalfLifeDays: 7,
};

export interface Candidate {
  /** Cosine distance to the query, 0..2. */
  distance: number;
  /** Cosine distances of the memories stored just before and after it in its session (0 to 2 of them). */
  neighbourDistances: readonly number[];
  /** The best cosine distance among the other memories of its session that recall read; none outside one. */
  sessionDistance: number | null;
  /** BM25 against the query; 0 when no term matched. */
  lexical: number;
  /** BM25 of the memory stored just before it in its session; 0 when none or no term matched. */
  previousLexical: number;
  /** BM25 of its session taken as one document (FUSION.sessionLexicalShare); 0 outside a session. */
  sessionLexical: number;
  /** The query names a speaker of the candidates, and this memory was said by another. */
  otherSpeaker: boolean;
  /** The query asks about time, and this memory states one (FUSION.timeCueBoost). */
  timeCue: boolean;
  /** Distinct lexemes of the memory's text (FUSION.lengthPriorWeight). */
  lexemes: number;
  binding: Binding;
  effectiveConfidence: number;
  /** When it last happened or was mentioned (CandidateRow.recent_ms): recency counts from it. */
  recentAt: Date;
}

export interface ScoreDetails {
  semantic: number;
  lexical: number;
  confidence: number;
  recency: number;
  prior: number;
}

export interface Scored<T> {
  item: T;
  score: number;
  details: ScoreDetails;
}

export function recencyFactor(binding: Binding, recentAt: Date, now: Date): number {
  if (binding !== 'session' && binding !== 'anchored') return 1;
  const days = Math.max(0, (now.getTime() - recentAt.getTime()) / DAY_MS);
  return 1 + FUSION.recencyBoost * Math.pow(0.5, days / FUSION.recencyHalfLifeDays);
}

const similarity = (distance: number): number => Math.max(0, 1 - distance);

/** A memory's similarity to the query with a share of its better session neighbour's. */
export function contextualSimilarity(
  c: Pick<Candidate, 'distance' | 'neighbourDistances' | 'sessionDistance'>,
): number {
  const neighbour = Math.max(0, ...c.neighbourDistances.map(similarity));
  const session = c.sessionDistance === null ? 0 : similarity(c.sessionDistance);
  return similarity(c.distance) + FUSION.neighbourSemanticShare * neighbour + FUSION.sessionSemanticShare * session;
}

/** A memory's BM25 with a share of the one stored before it in its session. */
export function contextualLexical(c: Pick<Candidate, 'lexical' | 'previousLexical' | 'sessionLexical'>): number {
  return c.lexical + FUSION.previousLexicalShare * c.previousLexical + FUSION.sessionLexicalShare * c.sessionLexical;
}

/** What a memory is worth before it is compared with the query: its length and, for a time question, its time. */
export function priorFactor(c: Pick<Candidate, 'timeCue' | 'lexemes'>): number {
  const length = Math.max(0, c.lexemes) / (Math.max(0, c.lexemes) + FUSION.lengthPriorHalf);
  const lengthPrior = 1 - FUSION.lengthPriorWeight + FUSION.lengthPriorWeight * length;
  return lengthPrior * (c.timeCue ? 1 + FUSION.timeCueBoost : 1);
}

/**
 * Scores one candidate set; normalization is over the set, so score sets from one call compare.
 * `semantic` and `lexical` in the details are the normalized parts after the speaker penalty, so that
 * score = (semanticWeight × semantic + lexicalWeight × lexical) × prior × confidence weight × recency.
 */
export function fuse<T>(items: readonly T[], view: (item: T) => Candidate, now: Date): Scored<T>[] {
  const candidates = items.map(view);
  const similarities = candidates.map(contextualSimilarity);
  const lexicals = candidates.map(contextualLexical);
  const minSim = Math.min(...similarities);
  const maxSim = Math.max(...similarities);
  const maxLex = Math.max(0, ...lexicals);
  return items.map((item, i) => {
    const c = candidates[i] as Candidate;
    const sim = similarities[i] as number;
    const speaker = c.otherSpeaker ? 1 - FUSION.otherSpeakerPenalty : 1;
    // A set whose similarities are all equal carries no semantic ordering: everyone gets full marks.
    const semantic = (maxSim > minSim ? (sim - minSim) / (maxSim - minSim) : 1) * speaker;
    const lexical = (maxLex > 0 ? (lexicals[i] as number) / maxLex : 0) * speaker;
    const relevance = FUSION.semanticWeight * semantic + FUSION.lexicalWeight * lexical;
    const confidence = c.effectiveConfidence;
    const recency = recencyFactor(c.binding, c.recentAt, now);
    const prior = priorFactor(c);
    const weight = 1 - FUSION.confidenceInfluence + FUSION.confidenceInfluence * confidence;
    const score = relevance * prior * weight * recency;
    return { item, score, details: { semantic, lexical, confidence, recency, prior } };
  });
}
