/**
 * The retrieval metrics of bench/README.md over ranked lists of memories. A memory can stand
 * for several turns (a turn that the store path merged into an earlier, identical one reinforces it
 * instead of being stored again), so each ranked item is the set of turn ids it holds.
 */

export interface QuestionScores {
  'recall@5': number;
  'recall@10': number;
  'recall@20': number;
  mrr: number;
  'ndcg@10': number;
  'session_recall@5': number;
  'session_recall@10': number;
}

export const METRICS = [
  'recall@5',
  'recall@10',
  'recall@20',
  'mrr',
  'ndcg@10',
  'session_recall@5',
  'session_recall@10',
] as const;

/** recall@k: the share of the evidence turns held by the first k memories. */
export function recallAt(ranked: readonly (readonly string[])[], evidence: ReadonlySet<string>, k: number): number {
  if (evidence.size === 0) return 0;
  const found = new Set<string>();
  for (const turns of ranked.slice(0, k)) for (const t of turns) if (evidence.has(t)) found.add(t);
  return found.size / evidence.size;
}

const holds = (turns: readonly string[], evidence: ReadonlySet<string>): boolean => turns.some((t) => evidence.has(t));

/** Reciprocal rank of the first memory that holds an evidence turn; 0 when none does. */
export function reciprocalRank(ranked: readonly (readonly string[])[], evidence: ReadonlySet<string>): number {
  const i = ranked.findIndex((turns) => holds(turns, evidence));
  return i === -1 ? 0 : 1 / (i + 1);
}

/**
 * nDCG@k with binary relevance: a memory is relevant when it holds an evidence turn. The ideal
 * ranking puts every memory that holds evidence first (`relevantMemories` of them).
 */
export function ndcgAt(
  ranked: readonly (readonly string[])[],
  evidence: ReadonlySet<string>,
  relevantMemories: number,
  k: number,
): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((turns, i) => {
    if (holds(turns, evidence)) dcg += 1 / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(relevantMemories, k); i++) ideal += 1 / Math.log2(i + 2);
  return ideal === 0 ? 0 : dcg / ideal;
}

export function scoreQuestion(
  ranked: readonly (readonly string[])[],
  evidence: ReadonlySet<string>,
  relevantMemories: number,
): QuestionScores {
  return {
    'recall@5': recallAt(ranked, evidence, 5),
    'recall@10': recallAt(ranked, evidence, 10),
    'recall@20': recallAt(ranked, evidence, 20),
    mrr: reciprocalRank(ranked, evidence),
    'ndcg@10': ndcgAt(ranked, evidence, relevantMemories, 10),
    'session_recall@5': sessionRecallAt(ranked, evidence, 5),
    'session_recall@10': sessionRecallAt(ranked, evidence, 10),
  };
}

/** The session a LoCoMo turn id belongs to: "D12:3" → "D12". */
export function sessionOfTurn(turn: string): string {
  const colon = turn.lastIndexOf(':');
  return colon === -1 ? turn : turn.slice(0, colon);
}

/**
 * Session-level recall@k, the figure peers publish: the sessions are taken in the order their
 * first turn appears in the ranking, and a question's score is the share of its evidence sessions
 * among the first k of them. Only the ranked memories count, so a ranking that reaches fewer than
 * k sessions is scored on those it reaches (the figure never credits a session the ranking missed).
 */
export function sessionRecallAt(
  ranked: readonly (readonly string[])[],
  evidence: ReadonlySet<string>,
  k: number,
): number {
  const wanted = new Set([...evidence].map(sessionOfTurn));
  if (wanted.size === 0) return 0;
  const sessions: string[] = [];
  for (const turns of ranked) {
    for (const t of turns) {
      const s = sessionOfTurn(t);
      if (!sessions.includes(s)) sessions.push(s);
    }
  }
  return sessions.slice(0, k).filter((s) => wanted.has(s)).length / wanted.size;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}
