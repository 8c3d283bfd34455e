import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { LlmBreaker } from '../llm/breaker.js';
import { detectContradictions } from './contradiction.js';
import type { ContradictionDetector, ContradictionVerdict } from './contradiction-detector.js';
import { createClaudeJudge, type ContradictionJudge } from './llm-judge.js';

/**
 * How the two combine: when the judge answers, its verdicts stand, both ways; when it does not
 * (no key, timeout, error, malformed answer), the heuristic's do.
 *
 * Why trust the judge rather than require agreement: the heuristic is deliberately narrow (it
 * says "no" to whatever its grammar does not cover: "is vegan" vs "eats meat", rephrased
 * attributes, most multi-clause text), so requiring agreement would cap recall at the heuristic's
 * and leave the model only a veto; and where the heuristic does say "yes" on a misreading (two
 * people both called "she"), the model reads the sentences as a person would. The model is
 * prompted to answer "no" when in doubt. A wrong supersession is also recoverable: the old row
 * stays, with status "superseded", and recall returns it with include_superseded=true.
 */
export function createContradictionDetector(judge?: ContradictionJudge): ContradictionDetector {
  return {
    local: judge === undefined,
    async contradicted(newer, candidates) {
      if (candidates.length === 0) return [];
      if (!judge) return heuristicVerdicts(newer, candidates);
      let answer: boolean[] | null;
      try {
        answer = await judge.judge(newer, candidates);
      } catch {
        // The Claude judge never rejects (it logs and answers null); another judge that does
        // must not fail the store either.
        answer = null;
      }
      return fromJudge(newer, candidates, answer);
    },
    async contradictedMany(items) {
      if (!judge) return items.map((item) => heuristicVerdicts(item.newer, item.candidates));
      let answers: (boolean[] | null)[] | null;
      try {
        if (judge.judgeMany) answers = await judge.judgeMany(items);
        else {
          // A judge that cannot batch is asked one item at a time, as single stores ask it.
          answers = [];
          for (const item of items) {
            answers.push(item.candidates.length === 0 ? [] : await judge.judge(item.newer, item.candidates));
          }
        }
      } catch {
        answers = null;
      }
      return items.map((item, i) => fromJudge(item.newer, item.candidates, answers?.[i] ?? null));
    },
  };
}

const heuristicVerdicts = (newer: string, candidates: readonly string[]): ContradictionVerdict[] =>
  detectContradictions(newer, candidates).map((v) => ({ ...v, by: 'heuristic' as const }));

/** The judge's answer as verdicts, or the heuristic's when it gave none (or not one per candidate). */
function fromJudge(newer: string, candidates: readonly string[], answer: boolean[] | null): ContradictionVerdict[] {
  if (candidates.length === 0) return [];
  if (!answer || answer.length !== candidates.length) return heuristicVerdicts(newer, candidates);
  return answer.map((contradicts) => ({ contradicts, rule: contradicts ? 'llm' : 'none', by: 'llm' as const }));
}

/** The detector the configuration asks for: with the model when an Anthropic key is set. */
export function contradictionDetectorFor(config: Config, log: Logger, breaker?: LlmBreaker): ContradictionDetector {
  const anthropic = config.anthropic;
  if (!anthropic) return createContradictionDetector();
  return createContradictionDetector(
    createClaudeJudge({
      apiKey: anthropic.apiKey,
      model: anthropic.model,
      baseURL: anthropic.baseUrl,
      timeoutMs: anthropic.timeoutMs,
      // A batch is an ingest's bulk call, as an extraction call is.
      batchTimeoutMs: config.extractionTimeoutMs,
      breaker,
      log,
    }),
  );
}
