import type { Binding } from '../config.js';

/**
 * How candidates become a ranking. Min-max normalized score fusion of the two sides beats
 * reciprocal rank fusion when the dense side is weak (DESIGN §3), and the dense part breaks the
 * heavy ties of ts_rank_cd.
 */
export const FUSION = {
  semanticWeight: 0.5,
  lexicalWeight: 0.5,
  /** Share of the score that effective confidence can take away: 0.5 halves a memory at confidence 0. */
  confidenceInfluence: 0.5,
  /** Session and anchored memories get up to this much extra when just reinforced, fading by half-life. */
  recencyBoost: 0.1,
  recencyHalfLifeDays: 7,
} as const;

export interface Candidate {
  /** Cosine distance to the query, 0..2. */
  distance: number;
  /** ts_rank_cd against the OR-query; 0 when no term matched. */
  lexicalRank: number;
  binding: Binding;
  effectiveConfidence: number;
  lastReinforcedAt: Date;
}

export interface ScoreDetails {
  semantic: number;
  lexical: number;
  confidence: number;
  recency: number;
}

export interface Scored<T> {
  item: T;
  score: number;
  details: ScoreDetails;
}

const DAY_MS = 86_400_000;

export function recencyFactor(binding: Binding, lastReinforcedAt: Date, now: Date): number {
  if (binding !== 'session' && binding !== 'anchored') return 1;
  const days = Math.max(0, (now.getTime() - lastReinforcedAt.getTime()) / DAY_MS);
  return 1 + FUSION.recencyBoost * Math.pow(0.5, days / FUSION.recencyHalfLifeDays);
}

/** Scores one candidate set; normalization is over the set, so score sets from one call compare. */
export function fuse<T>(items: readonly T[], view: (item: T) => Candidate, now: Date): Scored<T>[] {
  const candidates = items.map(view);
  const similarities = candidates.map((c) => Math.max(0, 1 - c.distance));
  const minSim = Math.min(...similarities);
  const maxSim = Math.max(...similarities);
  const maxLex = Math.max(0, ...candidates.map((c) => c.lexicalRank));
  return items.map((item, i) => {
    const c = candidates[i] as Candidate;
    const sim = similarities[i] as number;
    // A set whose similarities are all equal carries no semantic ordering: everyone gets full marks.
    const semantic = maxSim > minSim ? (sim - minSim) / (maxSim - minSim) : 1;
    const lexical = maxLex > 0 ? c.lexicalRank / maxLex : 0;
    const relevance = FUSION.semanticWeight * semantic + FUSION.lexicalWeight * lexical;
    const confidence = c.effectiveConfidence;
    const recency = recencyFactor(c.binding, c.lastReinforcedAt, now);
    const score = relevance * (1 - FUSION.confidenceInfluence + FUSION.confidenceInfluence * confidence) * recency;
    return { item, score, details: { semantic, lexical, confidence, recency } };
  });
}
