/**
 * A kept piece in the third person, the way the Claude extractor is asked to write it: "I prefer
 * email" → "The user prefers email", with the speaker's name when the message carries one. The
 * rewrite only conjugates, replaces pronouns, moves a leading time phrase to the end and frames a
 * wish as "would like"; it never adds a word that says something.
 */

import { IRREGULAR_PAST as ENGLISH_IRREGULAR_PAST, MODALS, union, wordSet } from '../../text/english.js';
import type { ConversationMessage } from '../extractor.js';
import { ADVERBS, QUESTION_WORDS, FIRST_PERSON, lower, firstWord, wordsOf, WISH } from './words.js';
import { TOGETHER } from './subjects.js';
import { isAnaphoric, isHedged } from './judge.js';

/** A statement longer than this is not one fact; the heuristic leaves it out. */
export const MAX_FACT_CHARS = 400;

/** Phrases of time or place that may open a clause before its subject: moved to the end. */
const LEADING_ADVERBIAL = wordSet(
  'on in at every each last next this right these nowadays currently usually sometimes today tomorrow yesterday ' +
    'since for during after before most now lately recently often',
);

const IRREGULAR_PAST = union(ENGLISH_IRREGULAR_PAST, wordSet('put quit used meant'));

/** Third-person forms that the regular rule gets wrong. */
const THIRD_PERSON: Readonly<Record<string, string>> = {
  have: 'has',
  do: 'does',
  go: 'goes',
  be: 'is',
  am: 'is',
  are: 'is',
  were: 'was',
  "don't": 'does not',
  dont: 'does not',
  "doesn't": 'does not',
  "can't": 'cannot',
  "didn't": 'did not',
  "won't": 'will not',
  "haven't": 'has not',
  "hasn't": 'has not',
  "isn't": 'is not',
  "aren't": 'is not',
  "wasn't": 'was not',
  "weren't": 'was not',
  "shouldn't": 'should not',
};

/** One-off requests to the assistant: not standing instructions, not facts. */
const TASK_VERBS = wordSet(
  'help tell show give find suggest recommend explain remind send check book write make get let look search list ' +
    'summarize summarise translate fix create draft compare calculate order cancel call email text share print ' +
    'describe continue repeat answer reply',
);

/** "Last year I moved to Austin" → "I moved to Austin last year". */
export function moveLeadingAdverbial(clause: string): string {
  if (!LEADING_ADVERBIAL.has(firstWord(clause))) return clause;
  const tokens = clause.split(/\s+/u, 6);
  for (let n = 1; n <= 4 && n < tokens.length; n++) {
    const subject = lower((tokens[n] ?? '').replace(/^[^\p{L}]+/u, ''));
    if (!FIRST_PERSON.has(subject.replace(/[,.]$/u, ''))) continue;
    const head = tokens.slice(0, n).join(' ').replace(/,$/u, '');
    if (/[.;:!?]/u.test(head)) return clause;
    const subjectAt = clause.indexOf(tokens[n] ?? '', head.length);
    return `${clause.slice(subjectAt)} ${lower(head[0] ?? '')}${head.slice(1)}`;
  }
  return clause;
}

function conjugate(verb: string): string {
  const lowered = lower(verb);
  // "-ed" is a past tense, except in "need", "feed", "proceed".
  const past = lowered.endsWith('ed') && !lowered.endsWith('eed');
  if (MODALS.has(lowered) || IRREGULAR_PAST.has(lowered) || past) return verb;
  const irregular = THIRD_PERSON[lowered];
  if (irregular) return irregular;
  if (/(s|sh|ch|x|z|o)$/u.test(lowered)) return `${verb}es`;
  if (/[^aeiou]y$/u.test(lowered)) return `${verb.slice(0, -1)}ies`;
  return `${verb}s`;
}

export interface Speaker {
  /** "The user" or the speaker's name. */
  readonly subject: string;
  /** "The user's" or "Priya's". */
  readonly possessive: string;
}

export function speakerOfMessage(message: ConversationMessage): Speaker {
  const name = message.name?.trim();
  if (!name) return { subject: 'The user', possessive: "The user's" };
  return { subject: name, possessive: `${name}'s` };
}

/** The subject and its auxiliary, rewritten: "I'm" → "is", "I don't" → "does not". */
const SUBJECT_FORMS: readonly [RegExp, string][] = [
  [/^(?:i'm|im|i am|we're|we are) not\b/iu, 'is not'],
  [/^(?:i'm|im|i am|we're|we are)\b/iu, 'is'],
  [/^(?:i|we) (?:wasn't|weren't|was not|were not)\b/iu, 'was not'],
  [/^(?:i|we) (?:was|were)\b/iu, 'was'],
  [/^(?:i|we) (?:haven't|have not)\b/iu, 'has not'],
  [/^(?:i've|ive|we've|i have|we have)\b/iu, 'has'],
  [/^(?:i|we) (?:won't|will not)\b/iu, 'will not'],
  [/^(?:i'll|we'll|i will|we will)\b/iu, 'will'],
  [/^(?:i'd|we'd|i would|we would) (like|love|prefer|rather)\b/iu, 'would $1'],
  [/^(?:i|we) (?:can't|cannot|can not)\b/iu, 'cannot'],
  [/^(?:i|we) (?:don't|dont|do not)\b/iu, 'does not'],
  [/^(?:i|we) (?:didn't|did not)\b/iu, 'did not'],
  [/^(?:i|we) (?:hadn't|had not)\b/iu, 'had not'],
  [/^(?:i|we) (?:shouldn't|should not)\b/iu, 'should not'],
  [/^(?:i|we) (?:mustn't|must not)\b/iu, 'must not'],
];

/** First-person words after the subject, in the third person (singular "they" for the speaker). */
const LATER_PRONOUNS: Readonly<Record<string, string>> = {
  "i'm": "they're",
  "i've": "they've",
  "i'll": "they'll",
  "i'd": "they'd",
  "we're": "they're",
  "we've": "they've",
  "we'll": "they'll",
  "we'd": "they'd",
  i: 'they',
  we: 'they',
  me: 'them',
  us: 'them',
  my: 'their',
  our: 'their',
  mine: 'theirs',
  ours: 'theirs',
  myself: 'themselves',
  ourselves: 'themselves',
};

function thirdPersonRest(text: string): string {
  return text
    .replace(/\b(I|i) am\b/gu, 'they are')
    .replace(/\b(I|i) was\b/gu, 'they were')
    .replace(/[\p{L}']+/gu, (w) => {
      // "US" is a country; "us" is the speakers.
      if (w === 'US') return w;
      return LATER_PRONOUNS[lower(w)] ?? w;
    });
}

/** "I love hiking" → "The user loves hiking"; undefined when the clause is not first-person. */
export function rewriteFirstPerson(clause: string, speaker: Speaker): string | undefined {
  // "My wife and I live in Rome" → "The user and their wife live in Rome": a plural subject.
  const together = TOGETHER.exec(clause);
  if (together) {
    return `${speaker.subject} and their ${together[1] ?? ''} ${thirdPersonRest(clause.slice(together[0].length))}`;
  }
  const opener = firstWord(clause);
  if (opener === 'my' || opener === 'our') {
    return `${speaker.possessive} ${thirdPersonRest(clause.slice(opener.length).trimStart())}`;
  }
  for (const [pattern, replacement] of SUBJECT_FORMS) {
    const match = pattern.exec(clause);
    if (!match) continue;
    const verb = replacement.replace('$1', lower(match[1] ?? ''));
    return `${speaker.subject} ${verb}${thirdPersonRest(clause.slice(match[0].length))}`;
  }
  if (/^i'd\b|^we'd\b/iu.test(clause)) return undefined;
  const subject = /^(?:i|we)\s+/iu.exec(clause);
  if (!subject) return undefined;
  const tokens = clause.slice(subject[0].length).split(/(\s+)/u);
  let v = 0;
  while (v < tokens.length && ADVERBS.has(lower(tokens[v] ?? ''))) v += 2;
  const verb = /^(\p{L}+(?:'t)?)([^\p{L}']*)$/u.exec(tokens[v] ?? '');
  if (!verb) return undefined;
  tokens[v] = `${conjugate(verb[1] ?? '')}${verb[2] ?? ''}`;
  return `${speaker.subject} ${thirdPersonRest(tokens.join(''))}`;
}

/** "Please always answer in British English" → "The user wants the assistant to always answer…". */
export function rewriteInstruction(clause: string, speaker: Speaker): string | undefined {
  let rest = clause;
  if (firstWord(rest) === 'please') rest = rest.slice('please'.length).trimStart();
  const negative = /^(?:don't|dont|do not|never)\s+/iu.exec(rest);
  const always = /^(?:always|only)\s+/iu.test(rest);
  const said = negative ? rest.slice(negative[0].length) : rest;
  const verb = firstWord(said);
  // Without "please", only a standing "always/never/don't" makes an imperative an instruction.
  if (firstWord(clause) !== 'please' && !negative && !always) return undefined;
  if (!negative && !always && TASK_VERBS.has(verb)) return undefined;
  if (!/^\p{L}+$/u.test(verb) || MODALS.has(verb) || FIRST_PERSON.has(verb)) return undefined;
  const not = negative ? (lower(negative[0]).startsWith('never') ? 'never ' : 'not ') : '';
  return `${speaker.subject} wants the assistant ${not}to ${thirdPersonRest(said)}`;
}

export function finish(statement: string): string | undefined {
  const text = statement
    .replace(/\s+/gu, ' ')
    .replace(/\s+([,.;:!])/gu, '$1')
    .trim();
  if (text.length > MAX_FACT_CHARS || wordsOf(text).length < 3) return undefined;
  return `${(text[0] ?? '').toUpperCase()}${text.slice(1)}.`;
}

/** Words that open what is wished for and are lower-case words in any sentence. */
const LOWER_CASE_OPENERS = wordSet('a an the some someone somebody something somewhere any another more one two');

/** "Someone gentle would be great" → "The user would like someone gentle", when the wish stands alone. */
export function wishOf(clause: string, speaker: Speaker): string | undefined {
  if (!lower(clause).includes(' would ')) return undefined;
  const wished = WISH.exec(clause)?.[1];
  if (wished === undefined) return undefined;
  const list = wordsOf(wished);
  const first = list[0] ?? '';
  if (list.length > 6 || isAnaphoric(wished) || isHedged(wished)) return undefined;
  if ((FIRST_PERSON.has(first) && first !== 'my' && first !== 'our') || QUESTION_WORDS.has(first)) return undefined;
  const text = LOWER_CASE_OPENERS.has(first) ? `${lower(wished[0] ?? '')}${wished.slice(1)}` : wished;
  return finish(`${speaker.subject} would like ${thirdPersonRest(text)}`);
}
