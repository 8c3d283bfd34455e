import type { Logger } from 'pino';
import type { Config } from '../config.js';

/**
 * One circuit breaker in front of every model call (the contradiction judge and the fact extractor
 * share it): after `failures` failures in a row, calls are skipped for `cooldownMs` and the
 * deterministic detector and extractor answer at once; then one trial call decides whether the
 * model is back. Without it, a model that fails or hangs costs every ingest and every store its
 * full timeout and retry, one call after another.
 */

export const LLM_PURPOSES = ['judge', 'extract'] as const;
export type LlmPurpose = (typeof LLM_PURPOSES)[number];

/** A call skipped because the circuit is open: the model was not asked. */
export class CircuitOpen extends Error {
  override readonly name = 'CircuitOpen';
  constructor() {
    super('the model is skipped while its circuit is open');
  }
}

export interface LlmCounts {
  /** Calls made to the model (a skipped call is not made). */
  readonly calls: number;
  readonly failures: number;
  /** Calls skipped while the circuit was open. */
  readonly skipped: number;
  /** Times the deterministic side answered instead of the model, after a failure or a skip. */
  readonly fallbacks: number;
}

export interface LlmBreaker {
  /**
   * Makes the call unless the circuit is open, when it rejects with CircuitOpen at once. A rejection
   * counts as a failure of the model unless `ownAbort` is aborted: the caller gave up, not the model.
   */
  run<T>(purpose: LlmPurpose, call: () => Promise<T>, ownAbort?: AbortSignal): Promise<T>;
  /** Records that the deterministic side answered instead of the model. */
  fellBack(purpose: LlmPurpose): void;
  /** True from the opening until a call succeeds again (the trial included). */
  isOpen(): boolean;
  counts(purpose: LlmPurpose): LlmCounts;
}

export interface LlmBreakerOptions {
  /** Failures in a row that open the circuit; 0 never opens it. */
  readonly failures: number;
  readonly cooldownMs: number;
  readonly log: Logger;
  /** Milliseconds; tests pass a clock they move. */
  readonly now?: () => number;
}

export function createLlmBreaker(options: LlmBreakerOptions): LlmBreaker {
  const { failures: threshold, cooldownMs, log } = options;
  const now = options.now ?? Date.now;
  const counts = Object.fromEntries(
    LLM_PURPOSES.map((p) => [p, { calls: 0, failures: 0, skipped: 0, fallbacks: 0 }]),
  ) as Record<LlmPurpose, { calls: number; failures: number; skipped: number; fallbacks: number }>;
  let inARow = 0;
  /** Set while open; a call after it is the trial. */
  let openUntil: number | undefined;
  let trialInFlight = false;

  function open(): void {
    openUntil = now() + cooldownMs;
    // Once per opening; a failed trial is a new opening, at most one per cool-down.
    log.warn(
      { event: 'llm_circuit_open', failures_in_a_row: inARow, cooldown_ms: cooldownMs },
      'the model keeps failing; it is skipped for the cool-down and the deterministic extractor and detector answer',
    );
  }

  return {
    async run(purpose, call, ownAbort) {
      const count = counts[purpose];
      let trial = false;
      if (openUntil !== undefined) {
        if (now() < openUntil || trialInFlight) {
          count.skipped++;
          throw new CircuitOpen();
        }
        trial = trialInFlight = true;
      }
      count.calls++;
      try {
        const result = await call();
        inARow = 0;
        if (openUntil !== undefined) {
          openUntil = undefined;
          log.info({ event: 'llm_circuit_closed' }, 'the model answers again');
        }
        return result;
      } catch (error) {
        if (!ownAbort?.aborted) {
          count.failures++;
          inARow++;
          if (trial || (openUntil === undefined && threshold > 0 && inARow >= threshold)) open();
        }
        throw error;
      } finally {
        if (trial) trialInFlight = false;
      }
    },
    fellBack(purpose) {
      counts[purpose].fallbacks++;
    },
    isOpen: () => openUntil !== undefined,
    counts: (purpose) => ({ ...counts[purpose] }),
  };
}

/** The breaker of the configured model; none without an Anthropic key. */
export function llmBreakerFor(config: Config, log: Logger): LlmBreaker | undefined {
  if (!config.anthropic) return undefined;
  return createLlmBreaker({ ...config.llmBreaker, log });
}
