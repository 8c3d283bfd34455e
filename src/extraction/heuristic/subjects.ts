/**
 * Whom a piece of the speaker's is about: a relation the speaker names ("my daughter Mila"), "my
 * wife and I", and the "he", "she" or "they" right after such a relation.
 */

import { MODALS, wordSet } from '../../text/english.js';
import { PRONOUN_SUBJECTS, FINITE, lower, firstWord, wordsOf } from './words.js';

/** Relations whose gender rules out one of "he" and "she". */
const FEMALE = wordSet(
  'daughter wife mother mom mum sister aunt grandmother grandma granny niece girlfriend fiancee stepdaughter ' +
    'stepmother stepsister',
);

const MALE = wordSet(
  'son husband father dad brother uncle grandfather grandpa nephew boyfriend fiance stepson stepfather stepbrother',
);

/** Determiners and prepositions end a search for the verb: "my kids love the beach" has no subject found. */
const NOT_IN_SUBJECT = wordSet('a an the to in on at of for with from by and or but');

export const TOGETHER = /^(?:my|our) ([\p{L}-]+(?: [\p{L}-]+)?) and (?:i|we|me)\s+/iu;

/**
 * "my daughter Mila" in "my daughter Mila needs a check-up": the speaker's relation a clause is
 * about, found as the words after "my" or "our" up to a verb; undefined when no verb is in sight.
 */
export function relationOf(clause: string): string | undefined {
  const tokens = clause.split(/\s+/u, 6);
  const opener = lower(tokens[0] ?? '');
  if ((opener !== 'my' && opener !== 'our') || !/^\p{L}+$/u.test(tokens[1] ?? '')) return undefined;
  for (let n = 2; n < tokens.length && n <= 4; n++) {
    const token = tokens[n] ?? '';
    const word = lower(token.replace(/[^\p{L}']+$/u, ''));
    if (!word || NOT_IN_SUBJECT.has(word)) return undefined;
    if (FINITE.has(word) || MODALS.has(word) || /(?:[^s]s|ed|n't)$/u.test(word)) return tokens.slice(0, n).join(' ');
    // A name ("my daughter Mila") or an adjective ("my oldest son") is part of the subject.
    if (token !== word && !/^\p{Lu}\p{Ll}*$/u.test(token)) return undefined;
  }
  return undefined;
}

/**
 * "she is seven" right after "my daughter Mila needs a check-up" is about the daughter: the pronoun
 * becomes the relation, when number and gender allow it. Any other pronoun stays, and the clause is
 * then left out as leaning on the conversation.
 */
export function resolvePronoun(clause: string, relation: string | undefined): string {
  if (relation === undefined) return clause;
  const said = firstWord(clause);
  if (!PRONOUN_SUBJECTS.has(said)) return clause;
  const pronoun = said.replace(/'.*$/u, '');
  const named = wordsOf(relation).slice(1);
  const head = named[named.length - 1] ?? '';
  const plural = /[^s]s$|children$|people$/u.test(head);
  const fits = pronoun === 'they' ? plural : !plural && !named.some((w) => (pronoun === 'he' ? FEMALE : MALE).has(w));
  if (!fits) return clause;
  let rest = clause.slice(said.length);
  if (said.endsWith("'re")) rest = ` are${rest}`;
  else if (said.endsWith("'s")) rest = `${/^\s+(?:been|got)\b/iu.test(rest) ? ' has' : ' is'}${rest}`;
  return `${relation}${rest}`;
}
