/** One turn of a conversation, as the ingest route receives it (docs/api.md §5, "Conversations"). */
export interface ConversationMessage {
  readonly role: 'user' | 'assistant' | 'system';
  readonly content: string;
  /** The speaker's name: facts about the speaker then name them instead of saying "The user". */
  readonly name?: string | undefined;
  /** ISO-8601, when the caller gave one. */
  readonly createdAt?: string | undefined;
}

export const FACT_KINDS = ['preference', 'fact', 'event', 'plan', 'constraint'] as const;
export type FactKind = (typeof FACT_KINDS)[number];

/**
 * A self-contained third-person statement about the speaker ("The user prefers email", "Priya's
 * daughter starts kindergarten next month"), with the index of the message it comes from.
 */
export interface ExtractedFact {
  readonly content: string;
  readonly kind: FactKind;
  /** Index into the messages given to `extract`. */
  readonly message: number;
}

/** One way of reading facts out of messages. May reject; the conversation extractor catches it. */
export interface Extractor {
  /** "heuristic", or "anthropic:<model>". */
  readonly id: string;
  extract(messages: readonly ConversationMessage[]): Promise<ExtractedFact[]>;
}

export interface Extraction {
  /** The extractor whose facts these are: after a fallback, "heuristic". */
  readonly extractor: string;
  /** In message order. */
  readonly facts: ExtractedFact[];
}

/** What the domain core holds (docs/architecture.md §1): never rejects, falls back on the heuristic. */
export interface ConversationExtractor {
  /** The extractor tried first. */
  readonly id: string;
  extract(messages: readonly ConversationMessage[]): Promise<Extraction>;
}
