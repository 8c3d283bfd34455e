/**
 * What every embedding provider offers the core. `id` names the model and its settings: every stored
 * vector records it, and a deployment refuses to mix vectors of two ids in one index.
 */
export interface Embedder {
  readonly id: string;
  readonly dimensions: number;
  /** One unit-length vector per text, in the order given. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  /** Releases workers and sockets; the embedder is unusable afterwards. */
  close(): Promise<void>;
}
