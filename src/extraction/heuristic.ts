/**
 * The deterministic extractor: what answers without a model, or when the model fails.
 *
 * It reads the user's turns only (the assistant's are its own chatter, system turns are set-up),
 * sentence by sentence, splits compound sentences where a new clause starts with its own subject
 * ("I live in Lisbon and I work as a nurse") or where a pleasantry, a question or a wish follows a
 * statement ("I'm vegan, sorry to be a pain", "I'm anxious, so someone gentle would be great"), and
 * judges each piece alone. It keeps a piece only when it is a declarative statement by the speaker
 * about themselves or what is theirs ("I ...", "We ...", "My ...", "Our ..."), a wish ("someone
 * gentle would be great"), or a standing instruction ("Please always ...", "Don't call me before
 * 10am"). It drops questions, greetings, thanks, filler, hedges and hypotheticals, and pieces that
 * lean on the conversation to be understood ("I like it", "we can't get one"): a memory must make
 * sense alone. The one pronoun it reads is a "he", "she" or "they" right after a relation the
 * speaker has just named ("my daughter Mila needs a check-up, she is seven").
 *
 * Kept clauses are rewritten into the third person the way the Claude extractor is asked to write
 * them: "I prefer email" → "The user prefers email", "My husband is allergic to dogs" → "The
 * user's husband is allergic to dogs", or with the speaker's name when the message carries one
 * ("Priya's daughter starts kindergarten next month"). The rewrite only conjugates, replaces
 * pronouns, moves a leading time phrase to the end and frames a wish as "would like"; it never adds a
 * word that says something.
 *
 * Pure and linear in the input: no regular expression here backtracks on long text.
 */

import {
  ADVERBS as ENGLISH_ADVERBS,
  AUX_DO,
  AUX_HAVE,
  BE_FINITE,
  IRREGULAR_PAST as ENGLISH_IRREGULAR_PAST,
  MODALS,
  union,
  wordSet,
} from '../text/english.js';
import type { ConversationMessage, ExtractedFact, Extractor, FactKind } from './extractor.js';

/** A statement longer than this is not one fact; the heuristic leaves it out. */
const MAX_FACT_CHARS = 400;

/** Words that open a turn without saying anything: greetings, thanks, agreement, discourse markers. */
const OPENERS = wordSet(
  'yes yeah yep yup no nope nah ok okay oh ah well so and but also anyway anyways actually honestly basically ' +
    'right great good cool sure perfect alright fine hmm um uh btw plus then hi hello hey thanks thank ' +
    'please lol haha wow nice awesome ugh oops sorry',
);
const OPENER_PHRASES = ['by the way', 'all right', 'thank you', 'good morning', 'good evening', 'good afternoon'];
/** Said at the end of a clause without changing it; "too" and "as well" lean on what came before. */
const CLOSERS = ['by the way', 'btw', 'anyway', 'lol', 'haha', 'thanks', 'thank you', 'please', 'too', 'as well'];

/** Phrases of time or place that may open a clause before its subject: moved to the end. */
const LEADING_ADVERBIAL = wordSet(
  'on in at every each last next this right these nowadays currently usually sometimes today tomorrow yesterday ' +
    'since for during after before most now lately recently often',
);

/**
 * Adverbs between the subject and its verb: kept, and the verb after them is conjugated. Frequency
 * and emphasis too, which the contradiction detector must read ("never" negates, "rarely" qualifies).
 */
const ADVERBS = union(
  ENGLISH_ADVERBS,
  wordSet(
    'never rarely seldom occasionally regularly absolutely totally mainly primarily even honestly literally ' +
      'truly finally',
  ),
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

/** Wh-words that open a question even without a question mark, when an auxiliary follows. */
const QUESTION_WORDS = wordSet('what how why where when who whom whose which');
/** Those that open a question after a comma; "who" and "which" there open a relative clause. */
const ASKING_WORDS = wordSet('what how why where when');
/** Auxiliaries that open a question before a subject ("can you…", "is it…"), with or without a question mark. */
const AUXILIARIES = union(AUX_DO, BE_FINITE, AUX_HAVE, wordSet('can could would will shall should may might'));
const QUESTION_SUBJECTS = wordSet('you i we it there they he she this that your my');

/** Hedges and hypotheticals: what follows is not something the speaker states as true. */
const HEDGE_OPENERS = wordSet('if unless maybe perhaps probably possibly hopefully');
const HEDGE_VERBS = wordSet('think guess suppose believe wonder hope wish doubt assume imagine');

/**
 * Pronouns that point back into the conversation ("I like it", "we moved there"): a clause that
 * needs them is not self-contained.
 */
const ANAPHORA = wordSet("it it's its they they're them their theirs he he's him his she she's her hers there");
const ANAPHORA_AT_END = wordSet('that this these those one');

/** Predicates that say nothing worth keeping: "I'm fine", "I see", "I agree". */
const FILLER = wordSet(
  'fine good ok okay great sure done back here ready sorry glad see agree understand know guess mean ' +
    'curious wondering confused lost set interested excited happy thrilled',
);
const FILLER_PHRASES = new Set([
  'all set',
  'not sure',
  'just looking',
  'just browsing',
  'just curious',
  'just wondering',
  'got it',
  'get it',
  'appreciate',
  'see what you mean',
  'will',
  'do',
  'did',
  'can',
  'have',
]);
/** One-off requests to the assistant: not standing instructions, not facts. */
const TASK_VERBS = wordSet(
  'help tell show give find suggest recommend explain remind send check book write make get let look search list ' +
    'summarize summarise translate fix create draft compare calculate order cancel call email text share print ' +
    'describe continue repeat answer reply',
);

/** Subjects a kept clause may open with, lower-cased, contractions included. */
const FIRST_PERSON = wordSet("i i'm im i've ive i'll i'd we we're we've we'll we'd my our");
/** What a new clause may open with, for splitting compound sentences. */
const CLAUSE_OPENERS = wordSet(
  "i i'm im i've ive i'll i'd we we're we've we'll we'd my our please he she they it it's there this that",
);
const CONJUNCTIONS = wordSet('and but so because although though while whereas plus');
/** Said after a comma, they open a piece of their own that is dropped alone: "I'm vegan, sorry to be a pain". */
const PLEASANTRIES = wordSet('sorry thanks thank cheers hope lol haha');
/** Third-person subjects that may stand for a relation the speaker has just named. */
const PRONOUN_SUBJECTS = wordSet("he she they he's she's they're");
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
/** A verb in the left part of "… and I …": without one, "My wife and I" is a subject, not a clause. */
const FINITE = union(BE_FINITE, AUX_HAVE, AUX_DO, wordSet('can will would should must'));

const lower = (s: string): string => s.toLowerCase();

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

/** The word at the start of a text, lower-cased, with an apostrophe contraction kept whole. */
function firstWord(text: string): string {
  return lower(/^[\p{L}\p{N}']+/u.exec(text)?.[0] ?? '');
}

function wordsOf(text: string): string[] {
  return lower(text).match(/[\p{L}\p{N}']+/gu) ?? [];
}

function endsWithQuestionMark(sentence: string): boolean {
  // Emoji and other symbols may follow the question mark.
  return sentence.replace(/[^\p{L}\p{N}?!.%)$"']+$/u, '').endsWith('?');
}

function isQuestion(sentence: string): boolean {
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
function reasonBeforeQuestion(sentence: string): string | undefined {
  const match = /^(?:since|because|as)\s+([^,?]+)(?:,|$)/iu.exec(stripOpeners(sentence));
  const reason = match?.[1];
  return reason !== undefined && FIRST_PERSON.has(firstWord(reason)) ? reason : undefined;
}

function stripOpeners(text: string): string {
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

function stripClosers(text: string): string {
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

/** "Last year I moved to Austin" → "I moved to Austin last year". */
function moveLeadingAdverbial(clause: string): string {
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

interface Speaker {
  /** "The user" or the speaker's name. */
  readonly subject: string;
  /** "The user's" or "Priya's". */
  readonly possessive: string;
}

function speakerOf(message: ConversationMessage): Speaker {
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

const TOGETHER = /^(?:my|our) ([\p{L}-]+(?: [\p{L}-]+)?) and (?:i|we|me)\s+/iu;

/** "I love hiking" → "The user loves hiking"; undefined when the clause is not first-person. */
function rewriteFirstPerson(clause: string, speaker: Speaker): string | undefined {
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
function rewriteInstruction(clause: string, speaker: Speaker): string | undefined {
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

function isAnaphoric(clause: string): boolean {
  const list = wordsOf(clause);
  const last = list[list.length - 1];
  return list.some((w) => ANAPHORA.has(w)) || (last !== undefined && ANAPHORA_AT_END.has(last));
}

function isHedged(clause: string): boolean {
  const list = wordsOf(clause);
  const [first, second] = list;
  if (first === undefined) return true;
  if (HEDGE_OPENERS.has(first)) return true;
  if ((first === 'i' || first === 'we') && second !== undefined && HEDGE_VERBS.has(second)) return true;
  if (list.includes('if') || (list.includes('not') && list.includes('sure'))) return true;
  // "would", "could", "might": hypothetical, except "I'd like…", "I would prefer…".
  return list.some(
    (w, i) =>
      (w === 'could' || w === 'might' || ((w === 'would' || w === "i'd" || w === "we'd") && i > 0)) &&
      !['like', 'love', 'prefer', 'rather'].includes(list[i + 1] ?? ''),
  );
}

/** Asking for the assistant's help is about this conversation, not about the speaker. */
const REQUEST =
  /^(?:i|we)(?:'d| would)? (?:really |just |actually |also |still )*(?:need|want|like|love|would like|'d like)(?: some| your| a little| a bit of)? (?:help|assistance|advice|suggestions?|ideas?|recommendations?|a recommendation|you to)\b/iu;

/** What follows the subject says nothing: "I'm fine", "I agree", "I will". */
function isFiller(clause: string): boolean {
  const list = wordsOf(clause);
  const first = list[0] ?? '';
  const skip = first === 'i' || first === 'we' ? (['am', 'are'].includes(list[1] ?? '') ? 2 : 1) : 1;
  const predicate = list
    .slice(skip)
    .filter((w) => !ADVERBS.has(w) && w !== 'so' && w !== 'very' && w !== 'all' && w !== 'too');
  if (predicate.length === 0) return true;
  const joined = predicate.join(' ');
  return FILLER_PHRASES.has(joined) || (predicate.length === 1 && FILLER.has(joined));
}

const KIND_PATTERNS: readonly [FactKind, RegExp][] = [
  [
    'preference',
    /\b(prefers?|likes?|loves?|enjoys?|hates?|dislikes?|favou?rite|wants?|would like|would love|would rather)\b/u,
  ],
  ['constraint', /\b(cannot|can't|not|never|allergic|intolerant|only|must|has to|needs?|avoids?)\b/u],
  [
    'plan',
    /\b(will|going to|plans?|planning|intends?|next (?:week|month|year)|tomorrow|soon|is (?:flying|travell?ing|moving|visiting|leaving|starting))\b/u,
  ],
  [
    'event',
    /\b(moved|started|had|went|was|were|did|used to|ago|last (?:week|month|year)|yesterday|(?:in|since) (?:19|20)\d\d)\b/u,
  ],
];

export function kindOf(statement: string): FactKind {
  const lowered = lower(statement);
  return KIND_PATTERNS.find(([, pattern]) => pattern.test(lowered))?.[0] ?? 'fact';
}

function finish(statement: string): string | undefined {
  const text = statement
    .replace(/\s+/gu, ' ')
    .replace(/\s+([,.;:!])/gu, '$1')
    .trim();
  if (text.length > MAX_FACT_CHARS || wordsOf(text).length < 3) return undefined;
  return `${(text[0] ?? '').toUpperCase()}${text.slice(1)}.`;
}

/** "Please remember that I'm allergic to nuts": the statement is what is to be remembered. */
const REMEMBER =
  /^(?:please\s+)?(?:remember|note|keep in mind|be aware|fyi|for the record|just so you know)(?:\s+that)?[\s,:]+/iu;

/** "…, so someone gentle would be great": what is wished for, then a word of praise from this list. */
const WISH =
  /^(.{1,80}?) would (?:really |just |also )?be (?:so |really |very |just )?(?:great|nice|ideal|perfect|lovely|wonderful|helpful|appreciated|amazing|fantastic|good|best|better|preferable)$/iu;
/** Words that open what is wished for and are lower-case words in any sentence. */
const LOWER_CASE_OPENERS = wordSet('a an the some someone somebody something somewhere any another more one two');

/** "Someone gentle would be great" → "The user would like someone gentle", when the wish stands alone. */
function wishOf(clause: string, speaker: Speaker): string | undefined {
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

/**
 * "my daughter Mila" in "my daughter Mila needs a check-up": the speaker's relation a clause is
 * about, found as the words after "my" or "our" up to a verb; undefined when no verb is in sight.
 */
function relationOf(clause: string): string | undefined {
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
function resolvePronoun(clause: string, relation: string | undefined): string {
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

/** The fact of one piece of a sentence of the speaker's, or nothing. */
function factOf(rawClause: string, speaker: Speaker): string | undefined {
  // Far longer than any statement it could keep: not worth reading.
  if (rawClause.length > 4 * MAX_FACT_CHARS) return undefined;
  const clause = moveLeadingAdverbial(stripClosers(stripOpeners(stripOpeners(rawClause).replace(REMEMBER, ''))));
  if (!clause) return undefined;
  const wish = wishOf(clause, speaker);
  if (wish !== undefined) return wish;
  if (isHedged(clause) || isAnaphoric(clause)) return undefined;
  const opener = firstWord(clause);
  if (FIRST_PERSON.has(opener)) {
    if (isFiller(clause) || REQUEST.test(clause)) return undefined;
    const statement = rewriteFirstPerson(clause, speaker);
    // "I'm Priya" from Priya says nothing her name does not.
    if (statement === undefined || lower(statement) === lower(`${speaker.subject} is ${speaker.subject}`)) {
      return undefined;
    }
    return finish(statement);
  }
  const instruction = rewriteInstruction(clause, speaker);
  return instruction === undefined ? undefined : finish(instruction);
}

/** The facts of one user message, in the order said, without repeats. */
export function factsOfMessage(message: ConversationMessage): { content: string; kind: FactKind }[] {
  if (message.role !== 'user') return [];
  const speaker = speakerOf(message);
  const facts: { content: string; kind: FactKind }[] = [];
  const seen = new Set<string>();
  // The relation the previous piece was about, for a "she" or "he" that follows it.
  let relation: string | undefined;
  for (const sentence of splitSentences(message.content)) {
    const asks = endsWithQuestionMark(sentence);
    const clauses = splitClauses(sentence);
    for (const [i, clause] of clauses.entries()) {
      // Each piece is judged alone: the question mark belongs to the last one only, and a reason
      // given for a question ("Since I'm diabetic, …?") is kept whichever piece holds it.
      const question = isQuestion(clause) || (asks && i === clauses.length - 1);
      const piece = question || asks ? reasonBeforeQuestion(clause) : undefined;
      if (question && piece === undefined) {
        relation = undefined;
        continue;
      }
      const stripped = stripOpeners(piece ?? clause);
      // "Oh, and she …": an opener alone keeps the relation for the pronoun after it.
      if (!/[\p{L}\p{N}]/u.test(stripped)) continue;
      const resolved = resolvePronoun(stripped, relation);
      relation = relationOf(resolved);
      const content = factOf(resolved, speaker);
      if (content === undefined || seen.has(lower(content))) continue;
      seen.add(lower(content));
      facts.push({ content, kind: kindOf(content) });
    }
  }
  return facts;
}

export function createHeuristicExtractor(): Extractor {
  return {
    id: 'heuristic',
    extract: (messages) =>
      Promise.resolve(
        messages.flatMap((message, index): ExtractedFact[] =>
          factsOfMessage(message).map((fact) => ({ ...fact, message: index })),
        ),
      ),
  };
}
