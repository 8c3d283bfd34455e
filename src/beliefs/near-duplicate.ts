/**
 * When a new statement is "the same memory" as a stored one. Embeddings cannot tell values apart
 * (USE-Lite scores "budget is 5000 dollars" against "budget is 8000 dollars" at 0.996), so high
 * similarity only nominates a duplicate: the texts must also agree on every number and on negation,
 * and the contradiction detector must not object.
 */

/** Cosine similarity at or above which two memories are near-identical, per embedder id prefix. */
const SIMILARITY_BY_EMBEDDER: readonly [prefix: string, threshold: number][] = [
  // Measured: paraphrases such as "Has two dogs named Rex" / "Has 2 dogs named Rex" score 0.98,
  // while compatible facts such as "Likes tea" / "Likes coffee" score 0.70.
  ['local:', 0.93],
  // Feature hashing sees shared wording only: near-duplicates measured 0.90-0.95 ("…every single
  // contact…" / "…every contact…" 0.947), different values of one attribute up to 0.84.
  ['hash:', 0.9],
];
const DEFAULT_SIMILARITY = 0.95;

export function nearDuplicateThreshold(embedderId: string): number {
  return SIMILARITY_BY_EMBEDDER.find(([prefix]) => embedderId.startsWith(prefix))?.[1] ?? DEFAULT_SIMILARITY;
}

/** Lowercase, punctuation dropped, whitespace collapsed: "Alice prefers email." = "alice prefers email". */
export function identityText(content: string): string {
  return content
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]+/gu, ' ')
    .replace(/\s+/gu, ' ')
    .trim();
}

const NEGATION = /\b(not|no|never|none|nothing|nobody|neither|nor|without)\b|n't\b/gu;

function numbers(text: string): string {
  return (text.match(/\d+(?:[.,]\d+)*/gu) ?? []).sort().join(' ');
}

function negations(text: string): number {
  return (text.toLowerCase().match(NEGATION) ?? []).length;
}

/** Whether two similar texts may still be one memory: the same numbers and the same polarity. */
export function sameValues(a: string, b: string): boolean {
  return numbers(a) === numbers(b) && negations(a) % 2 === negations(b) % 2;
}
