/**
 * The contradiction detector as the core sees it: one port, whatever judges behind it (the
 * deterministic grammar, or a model with the grammar as its fallback).
 */

export interface ContradictionVerdict {
  readonly contradicts: boolean;
  /** The heuristic's rule ('negation', 'same-attribute', ...), 'llm' for the model's yes, or 'none'. */
  readonly rule: string;
  readonly by: 'heuristic' | 'llm';
}

/** Decides which stored statements a new one contradicts (src/beliefs/detector.ts builds it). */
export interface ContradictionDetector {
  /**
   * True when a verdict needs no I/O (the deterministic detector): the store path then judges under
   * the partition lock. Otherwise (a model) it judges before taking the lock, never while holding it.
   */
  readonly local?: boolean;
  /** One verdict per candidate, in order: whether `newer` contradicts it. Never rejects. */
  contradicted(newer: string, candidates: readonly string[]): Promise<ContradictionVerdict[]>;
  /** The same for several new statements at once, in one model call where it can. Never rejects. */
  contradictedMany?(
    items: readonly { newer: string; candidates: readonly string[] }[],
  ): Promise<ContradictionVerdict[][]>;
}
