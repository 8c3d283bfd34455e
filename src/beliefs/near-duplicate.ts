/**
 * When a new statement is "the same memory" as a stored one. Embeddings cannot tell values apart
 * (USE-Lite scores "budget is 5000 dollars" against "budget is 8000 dollars" at 0.996), so high
 * similarity (the embedder's `nearDuplicateThreshold`) only nominates a duplicate: the texts must
 * also agree on every number and on negation, and the contradiction detector must not object.
 */

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
