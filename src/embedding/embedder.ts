/**
 * What every embedding provider offers the core. `id` names the model and its settings: every stored
 * vector records it, and a deployment refuses to mix vectors of two ids in one index.
 */
export interface Embedder {
  readonly id: string;
  readonly dimensions: number;
  /**
   * Cosine similarity at or above which two memories count as near-identical. Each model spreads
   * paraphrases and different facts over its own range, so each embedder measures and sets its own.
   */
  readonly nearDuplicateThreshold: number;
  /**
   * One unit-length vector per text, in the order given. Texts are stored documents unless
   * `options.kind` says they are search queries: some models (Voyage) embed the two differently, and
   * the others ignore the option.
   */
  embed(texts: readonly string[], options?: EmbedOptions): Promise<Float32Array[]>;
  /** Releases workers and sockets; the embedder is unusable afterwards. */
  close(): Promise<void>;
}

export type EmbedKind = 'document' | 'query';

export interface EmbedOptions {
  /** Default 'document'. */
  kind?: EmbedKind;
}
