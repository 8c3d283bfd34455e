import type { Embedder } from './embedder.js';

/**
 * Deterministic feature hashing of words and character trigrams: no model, no network, the same
 * vector for the same text on every machine. For tests, and as a last resort; it sees shared
 * wording, not meaning.
 */
export function createHashEmbedder(dimensions = 256): Embedder {
  return {
    id: `hash:v1-${dimensions}`,
    dimensions,
    // Feature hashing sees shared wording only: near-duplicates measured 0.90-0.95 ("…every single
    // contact…" / "…every contact…" 0.947), different values of one attribute up to 0.84.
    nearDuplicateThreshold: 0.9,
    embed: (texts) => Promise.resolve(texts.map((t) => hashEmbed(t, dimensions))),
    close: () => Promise.resolve(),
  };
}

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function addFeature(v: Float32Array, feature: string, weight: number): void {
  const h = fnv1a(feature);
  const index = h % v.length;
  // A sign bit from the hash keeps collisions from adding up in one direction.
  v[index] = (v[index] ?? 0) + (h & 0x80000000 ? -weight : weight);
}

export function hashEmbed(text: string, dimensions: number): Float32Array {
  const v = new Float32Array(dimensions);
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  for (const word of words) {
    addFeature(v, `w:${word}`, 1);
    const padded = `#${word}#`;
    for (let i = 0; i + 3 <= padded.length; i++) addFeature(v, `t:${padded.slice(i, i + 3)}`, 0.3);
  }
  let norm = 0;
  for (const x of v) norm += x * x;
  if (norm === 0) {
    // An empty or symbol-only text still needs a valid unit vector for cosine distance.
    v[0] = 1;
    return v;
  }
  const scale = 1 / Math.sqrt(norm);
  for (let i = 0; i < v.length; i++) v[i] = (v[i] ?? 0) * scale;
  return v;
}
