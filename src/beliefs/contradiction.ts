/**
 * Deterministic contradiction detector: does a newer memory contradict an older one of the same
 * partition? It reads each statement as clauses of (subject, predicate, value, polarity) with a
 * small hand-written grammar, and answers yes for two shapes only:
 *
 * - negation: the same predicate about the same subject with opposite polarity, where the negated
 *   statement is at least as general as the affirmed one ("never drinks coffee" vs "drinks coffee
 *   every morning"), never the other way round ("doesn't drink coffee at night" vs "drinks coffee");
 * - a single-valued (functional) attribute with two different values ("lives in Paris" vs "lives in
 *   Berlin", "budget is $5k" vs "budget is $8k", "the meeting is on Monday" vs "on Tuesday").
 *
 * Precision matters more than recall: a false "yes" supersedes a true memory, a false "no" only
 * leaves a stale one visible. So whatever the grammar does not understand is "no": multi-valued
 * predicates (likes, speaks, has a, visited...), values of different kinds or granularity ("Paris"
 * vs "France"), past vs present, qualified vs unqualified statements ("lives in Paris during the
 * summer"), different named subjects, "he" vs "she", or different things of one subject ("her
 * sister" vs "she").
 *
 * Pure, no dependencies, linear in the input: memories are capped in length upstream, and the
 * clause count is capped (statement.ts) so that a pathological input stays cheap.
 */

import { DETERMINERS, QUALIFIER_START, stem } from './lexicon.js';
import { isNumberWord, parseStatement, type Clause } from './statement.js';
import { comparePreferences, functionalFactOf } from './functional-facts.js';
import { compareValues, isTemporal } from './values.js';

export type ContradictionRule = 'negation' | 'same-attribute' | 'numeric-change' | 'date-change' | 'none';

export interface Verdict {
  readonly contradicts: boolean;
  /** Which rule fired, or 'none'. */
  readonly rule: ContradictionRule;
}

const NONE: Verdict = Object.freeze({ contradicts: false, rule: 'none' });

/**
 * Parsed statements by text, kept while a batch runs (withParsedStatementsKept), at most
 * PARSED_KEPT of them. A batch judges each item against the same few nearest memories of its
 * subject, so the same texts were parsed again and again: a fifth of a batch's client-side work.
 * Parsing is a pure function of the text and verdictOf only reads the clauses, so a kept parse
 * answers exactly as a new one. Emptied when the last batch running ends: memory texts are not
 * kept beyond the work that needs them, so a purged subject's texts do not linger here.
 */
const PARSED_KEPT = 4096;
const parsed = new Map<string, readonly Clause[]>();
let batchesRunning = 0;

/** Runs a batch's work with parsed statements kept for it, emptied when the last batch ends. */
export async function withParsedStatementsKept<T>(work: () => Promise<T>): Promise<T> {
  batchesRunning++;
  try {
    return await work();
  } finally {
    batchesRunning--;
    if (batchesRunning === 0) parsed.clear();
  }
}

/** How many parsed statements are kept now (tests). */
export function parsedStatementsKept(): number {
  return parsed.size;
}

function parsedStatement(text: string): readonly Clause[] {
  if (batchesRunning === 0) return parseStatement(text);
  let clauses = parsed.get(text);
  if (clauses === undefined) {
    clauses = parseStatement(text);
    // Emptied when full rather than ordered by use: simple, and a batch refills what it needs.
    if (parsed.size >= PARSED_KEPT) parsed.clear();
    parsed.set(text, clauses);
  }
  return clauses;
}

export function detectContradiction(newer: string, older: string): Verdict {
  return verdictOf(parsedStatement(newer), parsedStatement(older));
}

/** The verdicts of one newer statement against each candidate, parsing the newer one once. */
export function detectContradictions(newer: string, candidates: readonly string[]): Verdict[] {
  const clauses = parsedStatement(newer);
  return candidates.map((older) => verdictOf(clauses, parsedStatement(older)));
}

function verdictOf(a: readonly Clause[], b: readonly Clause[]): Verdict {
  for (const x of a) {
    for (const y of b) {
      const verdict = compareClauses(x, y);
      if (verdict.contradicts) return verdict;
    }
  }
  return NONE;
}

// ---------------------------------------------------------------------------------------------
// Comparing clauses

function sameSubject(a: Clause, b: Clause): boolean {
  if (a.head !== b.head) return false;
  if (a.owner === b.owner || a.owner === '' || b.owner === '') return true;
  const pronoun = (o: string): boolean => o === 'he' || o === 'she';
  // A name may be "he" or "she"; "he" is not "she".
  return pronoun(a.owner) !== pronoun(b.owner);
}

/** The object of a predicate as negation compares it: no articles, counts or inflections. */
function objectWords(c: Clause): string[] {
  return c.comp
    .map((t) => t.w)
    .filter((w) => !DETERMINERS.has(w) && !isNumberWord(w))
    .map(stem);
}

function negationContradicts(a: Clause, b: Clause): boolean {
  if (a.neg === b.neg || a.verb !== b.verb) return false;
  const negative = a.neg ? a : b;
  const positive = a.neg ? b : a;
  if (!negative.never && negative.tense !== positive.tense) return false;
  const n = objectWords(negative);
  const p = objectWords(positive);
  if (n.length > p.length || !n.every((w, i) => p[i] === w)) return false;
  if (p.length === n.length) return true;
  // The affirmed statement may add when, how often or how well ("drinks coffee every morning"),
  // which the general negation still denies; anything else ("coffee ice cream") is another object.
  let seen = 0;
  for (const t of positive.comp) {
    if (seen === n.length) return QUALIFIER_START.has(t.w);
    if (!DETERMINERS.has(t.w) && !isNumberWord(t.w)) seen++;
  }
  return false;
}

function compareClauses(a: Clause, b: Clause): Verdict {
  if (!sameSubject(a, b)) return NONE;
  if (negationContradicts(a, b)) return { contradicts: true, rule: 'negation' };
  const fa = functionalFactOf(a);
  const fb = functionalFactOf(b);
  if (!fa || !fb || fa.attr !== fb.attr) return NONE;
  const comparison =
    fa.preference && fb.preference
      ? comparePreferences(fa.preference, fb.preference)
      : compareValues(fa.value, fb.value);
  if (comparison !== 'different') return NONE;
  if (fa.value.kind === 'number' || fa.value.kind === 'money') return { contradicts: true, rule: 'numeric-change' };
  if (isTemporal(fa.value)) return { contradicts: true, rule: 'date-change' };
  return { contradicts: true, rule: 'same-attribute' };
}
