/**
 * A message cut into the pieces the deterministic extractor (../heuristic.ts) judges one by one:
 * sentences, then clauses where a new clause opens with its own subject or a pleasantry, a question
 * or a wish follows a statement; the openers and closers around a piece; whether a piece asks.
 */

import { AUX_DO, AUX_HAVE, BE_FINITE, union, wordSet } from '../../text/english.js';
import { QUESTION_WORDS, FIRST_PERSON, PRONOUN_SUBJECTS, FINITE, lower, firstWord, wordsOf, WISH } from './words.js';
import { TOGETHER, relationOf } from './subjects.js';

/** Words that open a turn without saying anything: greetings, thanks, agreement, discourse markers. */
const OPENERS = wordSet(
  'yes yeah yep yup no nope nah ok okay oh ah well so and but also anyway anyways actually honestly basically ' +
    'right great good cool sure perfect alright fine hmm um uh btw plus then hi hello hey thanks thank ' +
    'please lol haha wow nice awesome ugh oops sorry',
);

const OPENER_PHRASES = ['by the way', 'all right', 'thank you', 'good morning', 'good evening', 'good afternoon'];

/** Said at the end of a clause without changing it; "too" and "as well" lean on what came before. */
const CLOSERS = ['by the way', 'btw', 'anyway', 'lol', 'haha', 'thanks', 'thank you', 'please', 'too', 'as well'];

/** Those that open a question after a comma; "who" and "which" there open a relative clause. */
const ASKING_WORDS = wordSet('what how why where when');

/** Auxiliaries that open a question before a subject ("can you…", "is it…"), with or without a question mark. */
const AUXILIARIES = union(AUX_DO, BE_FINITE, AUX_HAVE, wordSet('can could would will shall should may might'));

const QUESTION_SUBJECTS = wordSet('you i we it there they he she this that your my');

/** What a new clause may open with, for splitting compound sentences. */
const CLAUSE_OPENERS = wordSet(
  "i i'm im i've ive i'll i'd we we're we've we'll we'd my our please he she they it it's there this that",
);

const CONJUNCTIONS = wordSet('and but so because although though while whereas plus');

/** Said after a comma, they open a piece of their own that is dropped alone: "I'm vegan, sorry to be a pain". */
const PLEASANTRIES = wordSet('sorry thanks thank cheers hope lol haha');

/** Curly quotes to straight ones, so that "I’m" reads as "I'm". */
function normalize(text: string): string {
  return text.replace(/[\u2018\u2019\u02bc\u2032]/gu, "'").replace(/[\u201c\u201d]/gu, '"');
}

const ABBREVIATIONS = wordSet('mr mrs ms dr st vs etc e.g i.e a.m p.m approx no jr sr prof');

/** Sentences, each with its closing punctuation; lines are sentences of their own. */
export function splitSentences(text: string): string[] {
  const sentences: string[] = [];
  for (const line of normalize(text).split(/\n+/u)) {
    let start = 0;
    for (let i = 0; i < line.length; i++) {
      const c = line[i];
      if (c !== '.' && c !== '!' && c !== '?' && c !== '…') continue;
      let end = i + 1;
      while (end < line.length && /[.!?…"')\]]/u.test(line[end] ?? '')) end++;
      if (end < line.length && line[end] !== ' ') continue;
      const candidate = line.slice(start, end).trim();
      const lastWord = lower(/([\p{L}.]+)[.]$/u.exec(candidate)?.[1] ?? '');
      if (c === '.' && ABBREVIATIONS.has(lastWord)) continue;
      if (candidate) sentences.push(candidate);
      start = end;
      i = end - 1;
    }
    const rest = line.slice(start).trim();
    if (rest) sentences.push(rest);
  }
  return sentences;
}

export function endsWithQuestionMark(sentence: string): boolean {
  // Emoji and other symbols may follow the question mark.
  return sentence.replace(/[^\p{L}\p{N}?!.%)$"']+$/u, '').endsWith('?');
}

export function isQuestion(sentence: string): boolean {
  if (endsWithQuestionMark(sentence)) return true;
  const [first, second] = wordsOf(stripOpeners(sentence));
  if (first === undefined) return false;
  if (QUESTION_WORDS.has(first)) return second !== undefined && (AUXILIARIES.has(second) || second.endsWith("'s"));
  return AUXILIARIES.has(first) && second !== undefined && QUESTION_SUBJECTS.has(second);
}

/**
 * "Since I'm lactose intolerant, what can I use instead of milk?": the reason before the question
 * is a statement, whether or not it was split from the question.
 */
export function reasonBeforeQuestion(sentence: string): string | undefined {
  const match = /^(?:since|because|as)\s+([^,?]+)(?:,|$)/iu.exec(stripOpeners(sentence));
  const reason = match?.[1];
  return reason !== undefined && FIRST_PERSON.has(firstWord(reason)) ? reason : undefined;
}

export function stripOpeners(text: string): string {
  let rest = text.trim();
  for (;;) {
    const lowered = lower(rest);
    const phrase = OPENER_PHRASES.find((p) => lowered.startsWith(p) && !/[\p{L}\p{N}]/u.test(rest[p.length] ?? ''));
    const word = phrase ?? firstWord(rest);
    // "I'm"-like words are subjects, never openers; a bare opener before a subject or punctuation is.
    if (!phrase && !OPENERS.has(word)) return rest;
    const after = rest.slice(word.length);
    // "Please always answer…" keeps its "please": it marks a standing instruction.
    if (word === 'please' && /^\s+\p{L}/u.test(after)) return rest;
    const next = after.replace(/^[\s,.!:;-]+/u, '');
    if (next === rest) return rest;
    rest = next;
  }
}

export function stripClosers(text: string): string {
  let rest = text.replace(/[\s.!,;:…]+$/u, '');
  for (;;) {
    const lowered = lower(rest);
    const closer = CLOSERS.find((c) => lowered.endsWith(c) && /[\s,]$/u.test(rest.slice(0, rest.length - c.length)));
    if (!closer) return rest;
    rest = rest.slice(0, rest.length - closer.length).replace(/[\s.!,;:…]+$/u, '');
  }
}

/**
 * Splits where a conjunction, a semicolon or (before a first-person subject) a comma opens a new
 * clause with its own subject: "I love hiking, but I hate crowded places" → two clauses;
 * "I love hiking and photography" → one. After a comma, a pleasantry ("…, sorry to be a pain"), a
 * question ("…, can you check?"), "he"/"she"/"they", or a conjunction after a clause that has its own
 * subject ("I'm anxious about it, so someone gentle would be great") opens a piece of its own too,
 * so that each piece is judged alone. A semicolon always ends a piece.
 */
export function splitClauses(sentence: string): string[] {
  const clauses: string[] = [];
  const tokens = sentence.split(/(\s+)/u);
  let current = '';
  let previous = '';
  // Whether the piece being read is a clause of the speaker's, subject and verb: read once per piece.
  let subject: boolean | undefined;
  const hasSubject = (): boolean => (subject ??= opensClause(stripOpeners(current.slice(0, 80))));
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] ?? '';
    if (token.trim() === '') {
      current += token;
      continue;
    }
    const afterComma = previous.endsWith(',');
    const afterSemicolon = previous.endsWith(';');
    previous = token;
    const word = lower(token.replace(/^[^\p{L}]+|[^\p{L}']+$/gu, ''));
    // Only words that can split are looked at closer, so a long sentence stays linear.
    const conjunction = CONJUNCTIONS.has(word);
    if (!conjunction && !afterComma && !afterSemicolon) {
      current += token;
      continue;
    }
    const next = tokens[i + 2] ?? '';
    let splitsHere: boolean;
    if (afterSemicolon) splitsHere = true;
    else if (conjunction) {
      // After a comma, "so" opens a clause of its own; "and" or "but" may go on with a list
      // ("a dog, a cat, and a parrot"), so only a wish that ends the sentence is split from them.
      splitsHere =
        (CLAUSE_OPENERS.has(firstWord(next)) && leftIsClause(current.trimEnd(), word, next)) ||
        (afterComma && hasSubject() && (word === 'so' || wishEnds(tokens, i + 2)));
    } else if (FIRST_PERSON.has(word) || word === 'please') splitsHere = /^\p{L}/u.test(token);
    else if (PRONOUN_SUBJECTS.has(word)) splitsHere = hasSubject();
    else {
      const second = firstWord(next);
      splitsHere =
        PLEASANTRIES.has(word) ||
        (AUXILIARIES.has(word) && QUESTION_SUBJECTS.has(second)) ||
        (ASKING_WORDS.has(word) && AUXILIARIES.has(second));
    }
    if (splitsHere && current.trim().length > 0) {
      clauses.push(current);
      subject = undefined;
      // The conjunction goes; a subject that opens the new clause stays.
      current = conjunction ? '' : token;
      if (conjunction) {
        previous = '';
        i++;
      }
      continue;
    }
    current += token;
  }
  if (current.trim()) clauses.push(current);
  return clauses.map((c) => c.replace(/^[\s,;:]+|[\s,;:]+$/gu, '')).filter((c) => c.length > 0);
}

/** Whether the tokens from `from` to the end of the sentence are a short wish: "a quiet table would be lovely". */
function wishEnds(tokens: readonly string[], from: number): boolean {
  // A wish is at most a dozen words; a longer rest is not read, so each split stays cheap.
  if (tokens.length - from > 24) return false;
  return WISH.test(stripClosers(tokens.slice(from).join('')));
}

/** "I …", "My wife and I …", or "My sister lives …" but not "My sister, …": the speaker's subject and a verb. */
function opensClause(text: string): boolean {
  const first = firstWord(text);
  if (first !== 'my' && first !== 'our') return FIRST_PERSON.has(first);
  return TOGETHER.test(text) || relationOf(text) !== undefined;
}

/** "My wife and I moved…" is one clause: its left part has no verb of its own. */
function leftIsClause(left: string, conjunction: string, right: string): boolean {
  if (conjunction !== 'and') return true;
  const next = firstWord(right);
  if (next !== 'i' && next !== 'we') return true;
  const leftWords = wordsOf(left);
  const first = leftWords[0] ?? '';
  if (first === 'i' || first === 'we' || /^(i|we)'/u.test(first)) return true;
  return leftWords.some((w) => FINITE.has(w) || /'(s|m|re|ve|ll|d)$/u.test(w));
}
