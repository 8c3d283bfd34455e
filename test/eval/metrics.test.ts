import { describe, expect, it } from 'vitest';
import {
  mean,
  ndcgAt,
  percentile,
  reciprocalRank,
  recallAt,
  scoreQuestion,
  sessionOfTurn,
  sessionRecallAt,
} from '../../tools/eval/metrics.js';

/** The figures docs/benchmarks.md reports come from these: each is checked by hand on a small ranking. */
describe('retrieval metrics of the LoCoMo evaluation', () => {
  // Ranked memories, each with the turns it holds; the second merged two identical turns.
  const ranked = [['D1:1'], ['D1:2', 'D2:7'], ['D1:3'], ['D3:1']];
  const evidence = new Set(['D2:7', 'D3:1', 'D9:9']);

  it('recall@k counts evidence turns, not memories, within the first k', () => {
    expect(recallAt(ranked, evidence, 1)).toBe(0);
    expect(recallAt(ranked, evidence, 2)).toBeCloseTo(1 / 3, 12);
    expect(recallAt(ranked, evidence, 10)).toBeCloseTo(2 / 3, 12);
    expect(recallAt(ranked, new Set(), 10)).toBe(0);
  });

  it('MRR is the reciprocal rank of the first memory holding evidence', () => {
    expect(reciprocalRank(ranked, evidence)).toBe(0.5);
    expect(reciprocalRank(ranked, new Set(['nowhere']))).toBe(0);
  });

  it('nDCG@k uses binary relevance against an ideal of the relevant memories first', () => {
    // Hits at ranks 2 and 4; three relevant memories exist, so the ideal has hits at 1, 2 and 3.
    const dcg = 1 / Math.log2(3) + 1 / Math.log2(5);
    const ideal = 1 + 1 / Math.log2(3) + 1 / Math.log2(4);
    expect(ndcgAt(ranked, evidence, 3, 10)).toBeCloseTo(dcg / ideal, 12);
    expect(ndcgAt(ranked, evidence, 3, 1)).toBe(0);
    expect(ndcgAt([['a'], ['b']], new Set(['a', 'b']), 2, 10)).toBeCloseTo(1, 12);
    expect(ndcgAt(ranked, evidence, 0, 10)).toBe(0);
  });

  it('session-level recall@k takes sessions in the order their first turn is ranked', () => {
    expect(sessionOfTurn('conv-1/D12:3')).toBe('conv-1/D12');
    // Sessions in ranking order: D1 (ranks 1–3, D2 first seen at rank 2), D2, D3; evidence sessions D2, D3, D9.
    expect(sessionRecallAt(ranked, evidence, 1)).toBe(0);
    expect(sessionRecallAt(ranked, evidence, 2)).toBeCloseTo(1 / 3, 12);
    expect(sessionRecallAt(ranked, evidence, 3)).toBeCloseTo(2 / 3, 12);
    // Two evidence turns of one session count once; a ranking reaching fewer than k sessions is scored on those.
    expect(sessionRecallAt([['D4:1'], ['D4:2']], new Set(['D4:1', 'D4:9']), 10)).toBe(1);
    expect(sessionRecallAt(ranked, new Set(), 10)).toBe(0);
  });

  it('scores a question on every metric at once', () => {
    expect(scoreQuestion(ranked, evidence, 3)).toEqual({
      'recall@5': recallAt(ranked, evidence, 5),
      'recall@10': recallAt(ranked, evidence, 10),
      'recall@20': recallAt(ranked, evidence, 20),
      mrr: 0.5,
      'ndcg@10': ndcgAt(ranked, evidence, 3, 10),
      'session_recall@5': sessionRecallAt(ranked, evidence, 5),
      'session_recall@10': sessionRecallAt(ranked, evidence, 10),
    });
  });

  it('means and nearest-rank percentiles', () => {
    expect(mean([])).toBe(0);
    expect(mean([1, 2, 6])).toBe(3);
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 95)).toBe(95);
    expect(percentile([7], 95)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });
});
