import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { LlmBreaker } from '../llm/breaker.js';
import { createClaudeExtractor, ExtractionFailed } from './claude.js';
import {
  FACT_KINDS,
  type ConversationExtractor,
  type ConversationMessage,
  type ExtractedFact,
  type FactKind,
  type Extraction,
  type Extractor,
} from './extractor.js';
import { createHeuristicExtractor } from './heuristic.js';

/** Facts a caller can store: each names a message given and says something. */
function wellFormed(facts: unknown, count: number): facts is ExtractedFact[] {
  return (
    Array.isArray(facts) &&
    facts.every(
      (f: Partial<ExtractedFact> | null) =>
        typeof f?.content === 'string' &&
        f.content.trim().length > 0 &&
        FACT_KINDS.includes(f.kind as FactKind) &&
        Number.isInteger(f.message) &&
        (f.message ?? -1) >= 0 &&
        (f.message ?? count) < count,
    )
  );
}

const inMessageOrder = (facts: readonly ExtractedFact[]): ExtractedFact[] =>
  facts
    .map((fact, i) => ({ fact, i }))
    .sort((a, b) => a.fact.message - b.fact.message || a.i - b.i)
    .map(({ fact }) => fact);

/**
 * The primary extractor when there is one, the heuristic when there is not or when the primary
 * fails in any way (it rejects, or answers something malformed): the ingest call then still
 * succeeds, and one warning says why, without content.
 */
export function createConversationExtractor(primary: Extractor | undefined, log: Logger): ConversationExtractor {
  const heuristic = createHeuristicExtractor();
  const fallback = async (messages: readonly ConversationMessage[]): Promise<Extraction> => ({
    extractor: heuristic.id,
    facts: inMessageOrder(await heuristic.extract(messages)),
  });
  if (!primary) return { id: heuristic.id, extract: fallback };
  return {
    id: primary.id,
    async extract(messages) {
      const started = Date.now();
      let failure: Record<string, unknown>;
      try {
        const facts = await primary.extract(messages);
        if (wellFormed(facts, messages.length)) return { extractor: primary.id, facts: inMessageOrder(facts) };
        failure = { reason: 'malformed' };
      } catch (error) {
        failure =
          error instanceof ExtractionFailed
            ? error.details
            : { reason: 'unexpected', type: error instanceof Error ? error.name : typeof error };
      }
      log.warn(
        {
          event: 'extraction_fallback',
          extractor: primary.id,
          ...failure,
          messages: messages.length,
          ms: Date.now() - started,
        },
        'fact extraction failed; the deterministic extractor answers',
      );
      return fallback(messages);
    },
  };
}

/** The extractor the configuration asks for: Claude when an Anthropic key is set. */
export function extractorFor(config: Config, log: Logger, breaker?: LlmBreaker): ConversationExtractor {
  const anthropic = config.anthropic;
  if (!anthropic) return createConversationExtractor(undefined, log);
  return createConversationExtractor(
    createClaudeExtractor({
      apiKey: anthropic.apiKey,
      model: anthropic.model,
      baseURL: anthropic.baseUrl,
      timeoutMs: config.extractionTimeoutMs,
      maxFactChars: config.contentLimitChars,
      breaker,
      log,
    }),
    log,
  );
}
