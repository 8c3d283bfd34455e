/**
 * The words the deterministic extractor (../heuristic.ts) reads by in more than one of its steps,
 * and its small readers of words.
 */

import { ADVERBS as ENGLISH_ADVERBS, AUX_DO, AUX_HAVE, BE_FINITE, union, wordSet } from '../../text/english.js';

/**
 * Adverbs between the subject and its verb: kept, and the verb after them is conjugated. Frequency
 * and emphasis too, which the contradiction detector must read ("never" negates, "rarely" qualifies).
 */
export const ADVERBS = union(
  ENGLISH_ADVERBS,
  wordSet(
    'never rarely seldom occasionally regularly absolutely totally mainly primarily even honestly literally ' +
      'truly finally',
  ),
);

/** Wh-words that open a question even without a question mark, when an auxiliary follows. */
export const QUESTION_WORDS = wordSet('what how why where when who whom whose which');

/** Subjects a kept clause may open with, lower-cased, contractions included. */
export const FIRST_PERSON = wordSet("i i'm im i've ive i'll i'd we we're we've we'll we'd my our");

/** Third-person subjects that may stand for a relation the speaker has just named. */
export const PRONOUN_SUBJECTS = wordSet("he she they he's she's they're");

/** A verb in the left part of "… and I …": without one, "My wife and I" is a subject, not a clause. */
export const FINITE = union(BE_FINITE, AUX_HAVE, AUX_DO, wordSet('can will would should must'));

export const lower = (s: string): string => s.toLowerCase();

/** The word at the start of a text, lower-cased, with an apostrophe contraction kept whole. */
export function firstWord(text: string): string {
  return lower(/^[\p{L}\p{N}']+/u.exec(text)?.[0] ?? '');
}

export function wordsOf(text: string): string[] {
  return lower(text).match(/[\p{L}\p{N}']+/gu) ?? [];
}

/** "…, so someone gentle would be great": what is wished for, then a word of praise from this list. */
export const WISH =
  /^(.{1,80}?) would (?:really |just |also )?be (?:so |really |very |just )?(?:great|nice|ideal|perfect|lovely|wonderful|helpful|appreciated|amazing|fantastic|good|best|better|preferable)$/iu;
