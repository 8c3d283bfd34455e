/**
 * How the contradiction detector reads a statement: spelling variants and contractions normalized,
 * words tokenized, and each sentence parsed by a small grammar into clauses of (subject, predicate,
 * value, polarity).
 */

import { AUX_BE, AUX_DO, AUX_HAVE, MODALS } from '../text/english.js';
import {
  ADVERBS,
  ANTI_LIKE,
  CLAUSE_CUT,
  CODE_HEADS,
  DATE_HEADS,
  DETERMINERS,
  FUNCTIONAL_PREFIXES,
  GENERIC_SUBJECTS,
  IRREGULAR_PAST,
  LIKE,
  NAME_HEADS,
  NUMBER_WORDS,
  NUMERIC_HEADS,
  PASSIVES,
  PAST_PARTICIPLES,
  POSSESSIVE_PRONOUNS,
  PRO_LIKE,
  RELATION_NOUNS,
  RESCHEDULE,
  TEXT_HEADS,
  TRAILING_NOISE,
  VERB_STEMS,
  stem,
} from './lexicon.js';

export interface Token {
  /** Lowercased, normalized word. */
  readonly w: string;
  /** Capitalized in the original text: how a name is told from a noun. */
  readonly cap: boolean;
  /** Ended in 's or s': an owner ("Alice's budget"). */
  readonly poss: boolean;
}

type Tense = 'present' | 'past' | 'perfect';

export interface Clause {
  /** '' for a generic or implicit subject, 'he'/'she' for those pronouns, else a name. */
  readonly owner: string;
  /** What of the owner the clause is about ('' for the owner itself): "budget", "sister". */
  readonly head: string;
  readonly neg: boolean;
  /** "never" negates the predicate at every time, so it meets any tense. */
  readonly never: boolean;
  readonly tense: Tense;
  /** Stem of the main verb, prefixed by its modal ("can:swim"); 'be' for a copula. */
  readonly verb: string;
  /** Words after the verb, lowercased, with noise removed. */
  readonly comp: readonly Token[];
  /** The statement uses capitals, so a lowercase value is not a name. */
  readonly cased: boolean;
  /** A passive reschedule ("was moved to Thursday") that stands for a copula. */
  readonly rescheduled: boolean;
}

/** Spelling variants and contractions, in one pass: this runs on every candidate of every store. */
const NORMALIZE =
  /\b(?:(e-mail)|(favourite)|(colour)|(can'?t|cannot)|(won't)|(\w+)n't|(he|she|it|that|there|who|what)'s|(no longer)|(in person)|(rather than|instead of))\b|'(re|m|ve|ll)\b/giu;
const CONTRACTED: Readonly<Record<string, string>> = { re: ' are', m: ' am', ve: ' have', ll: ' will' };

function normalizeText(text: string): string {
  return text
    .replace(/[\u2018\u2019\u02bc]/gu, "'")
    .replace(
      NORMALIZE,
      (_match, email, favourite, colour, cant, wont, nt, pronoun, noLonger, inPerson, over, contracted) => {
        if (email) return 'email';
        if (favourite) return 'favorite';
        if (colour) return 'color';
        if (cant) return 'can not';
        if (wont) return 'will not';
        if (nt) return `${nt} not`;
        if (pronoun) return `${pronoun} is`;
        if (noLonger) return 'not';
        if (inPerson) return 'in-person';
        if (over) return 'over';
        return CONTRACTED[String(contracted).toLowerCase()] ?? '';
      },
    );
}

function tokenize(sentence: string): Token[] {
  const tokens: Token[] = [];
  for (const raw of sentence.split(/\s+/u)) {
    let word = raw.replace(/^[("'[\]{}]+/u, '').replace(/[)"'\]{},:!?.]+$/u, '');
    if (word === '') continue;
    let poss = false;
    if (/'s$/iu.test(word)) {
      word = word.slice(0, -2);
      poss = true;
    } else if (/s'$/iu.test(word)) {
      word = word.slice(0, -1);
      poss = true;
    }
    tokens.push({ w: word.toLowerCase(), cap: /^\p{Lu}/u.test(word), poss });
  }
  return tokens;
}
const MAX_CLAUSES = 16;

export function parseStatement(text: string): Clause[] {
  const clauses: Clause[] = [];
  const normalized = normalizeText(text);
  const cased = /\p{Lu}/u.test(normalized) && /\p{Ll}/u.test(normalized);
  let previous: Clause | undefined;
  for (const sentence of normalized.split(/(?<=[.!?;])\s+|\n+/u)) {
    for (const part of splitCoordinated(tokenize(sentence))) {
      if (clauses.length >= MAX_CLAUSES) return clauses;
      const clause = parseClause(part, previous, cased);
      if (clause) {
        clauses.push(clause);
        previous = clause;
      }
    }
  }
  return clauses;
}

const isAux = (w: string): boolean => AUX_BE.has(w) || AUX_HAVE.has(w) || AUX_DO.has(w) || MODALS.has(w);
export const isNumberWord = (w: string): boolean => /^\d/u.test(w) || w in NUMBER_WORDS;

function isVerbStart(tokens: readonly Token[], i: number): boolean {
  let j = i;
  while (j < tokens.length && (ADVERBS.has(tokens[j]!.w) || tokens[j]!.w === 'not' || tokens[j]!.w === 'never')) j++;
  const t = tokens[j];
  return t !== undefined && (isAux(t.w) || VERB_STEMS.has(stem(t.w)));
}

/** "Lives in Paris and works at Acme" is two clauses; "likes jazz and blues" is one. */
function splitCoordinated(tokens: readonly Token[]): Token[][] {
  const parts: Token[][] = [];
  let current: Token[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if ((t.w === 'and' || t.w === 'but') && current.length > 0 && isVerbStart(tokens, i + 1)) {
      parts.push(current);
      current = [];
      continue;
    }
    current.push(t);
  }
  if (current.length > 0) parts.push(current);
  return parts;
}

/** Index of the main verb (or its auxiliary), or -1. */
function findVerb(tokens: readonly Token[]): number {
  let start = 0;
  while (start < tokens.length && (ADVERBS.has(tokens[start]!.w) || tokens[start]!.w === 'never')) start++;
  for (let i = start; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.poss) continue;
    if (isAux(t.w)) return i;
    if (VERB_STEMS.has(stem(t.w))) {
      // A noun that looks like a verb: "Alice's favorite drink", "my work email", "two drinks".
      const prev = i > 0 ? tokens[i - 1] : undefined;
      const nounContext =
        prev !== undefined &&
        (prev.poss ||
          DETERMINERS.has(prev.w) ||
          prev.w in POSSESSIVE_PRONOUNS ||
          FUNCTIONAL_PREFIXES.has(prev.w) ||
          isNumberWord(prev.w));
      if (!nounContext) return i;
    }
  }
  // No known verb: a subjectless memory starts with its verb ("Drives a red car").
  const first = tokens[start];
  if (first && !DETERMINERS.has(first.w) && !(first.w in POSSESSIVE_PRONOUNS) && !(first.w in GENERIC_SUBJECTS)) {
    return start;
  }
  return -1;
}

/**
 * The subject: an owner (a name, a pronoun, or the implicit subject) and a head, the path of
 * things of that owner the clause is about: "his wife's name" → owner 'he', head "wife's name".
 */
function subjectOf(np: readonly Token[]): { owner: string; head: string } {
  const segments: Token[][] = [[]];
  for (const t of np) {
    segments[segments.length - 1]!.push(t);
    if (t.poss || t.w in POSSESSIVE_PRONOUNS) segments.push([]);
  }
  const content = (ts: readonly Token[]): string[] =>
    ts.map((t) => t.w).filter((w) => !DETERMINERS.has(w) && !(w in POSSESSIVE_PRONOUNS));
  const nonEmpty = segments.filter((s) => s.length > 0);
  const first = nonEmpty[0];
  if (!first) return { owner: '', head: '' };

  let owner: string | undefined;
  const firstWords = content(first);
  const firstText = firstWords.join(' ');
  if (first.length === 1 && first[0]!.w in POSSESSIVE_PRONOUNS) owner = POSSESSIVE_PRONOUNS[first[0]!.w];
  else if (firstText === '' && first.some((t) => DETERMINERS.has(t.w))) owner = undefined;
  else if (firstText in GENERIC_SUBJECTS) owner = GENERIC_SUBJECTS[firstText];
  else if (
    !DETERMINERS.has(first[0]!.w) &&
    first.every((t) => t.cap) &&
    !firstWords.some((w) => RELATION_NOUNS.has(w)) &&
    !(nonEmpty.length === 1 && isFunctionalHead(firstText))
  ) {
    owner = firstText;
  }
  const rest = owner === undefined ? nonEmpty : nonEmpty.slice(1);
  const head = rest
    .map((s) => content(s).join(' '))
    .filter((s) => s !== '')
    .join("'s ");
  return { owner: owner ?? '', head };
}

export type HeadKind = 'numeric' | 'date' | 'name' | 'code' | 'text' | undefined;

export function headKind(head: string): HeadKind {
  if (head === '') return undefined;
  // "budget for the trip": the noun is what comes before the preposition.
  const last = head.split("'s ").pop()!;
  const core = last.split(/ (?:for|of|at|in|on|with) /u)[0]!.split(' ');
  const noun = core[core.length - 1] ?? '';
  if (core.some((w) => FUNCTIONAL_PREFIXES.has(w))) return 'text';
  if (last === 'date of birth') return 'date';
  if (NUMERIC_HEADS.has(noun)) return 'numeric';
  if (DATE_HEADS.has(noun)) return 'date';
  if (NAME_HEADS.has(noun)) return 'name';
  if (CODE_HEADS.has(noun) || core.join(' ') === 'time zone') return 'code';
  if (TEXT_HEADS.has(noun) || core.slice(-2).join(' ') === 'job title') return 'text';
  return undefined;
}

const isFunctionalHead = (head: string): boolean => headKind(head) !== undefined;

function parseClause(tokens: readonly Token[], previous: Clause | undefined, cased: boolean): Clause | undefined {
  const v = findVerb(tokens);
  if (v < 0) return undefined;
  let neg = false;
  let never = false;
  const np: Token[] = [];
  for (let k = 0; k < v; k++) {
    const w = tokens[k]!.w;
    if (w === 'never') {
      neg = !neg;
      never = true;
    } else if (w === 'not') neg = !neg;
    else if (!ADVERBS.has(w)) np.push(tokens[k]!);
  }
  let { owner, head } = subjectOf(np);
  // A subjectless clause after "and" continues the previous clause's subject.
  if (np.length === 0 && previous) ({ owner, head } = previous);

  let i = v;
  const skipAdverbs = (): void => {
    for (; i < tokens.length; i++) {
      const w = tokens[i]!.w;
      if (w === 'not') neg = !neg;
      else if (w === 'never') {
        neg = !neg;
        never = true;
      } else if (!ADVERBS.has(w)) break;
    }
  };
  const first = tokens[i]!.w;
  let tense: Tense = 'present';
  let modal = '';
  let verbWord: string;
  let rescheduled = false;

  /** After a form of "be": "based in", "born on", "called", or a reschedule ("moved to"). */
  const afterBe = (): void => {
    const next = tokens[i]?.w ?? '';
    if (PASSIVES.has(next)) {
      verbWord = next === 'called' ? 'named' : next;
      i++;
    } else if (RESCHEDULE.has(stem(next)) && tokens[i + 1]?.w === 'to') {
      rescheduled = true;
      // "was moved to Thursday" says when it is now.
      tense = 'present';
      i += 2;
    } else if (/ing$/u.test(next) && next.length > 4) {
      // Progressive: "is living in Tokyo" is "lives in Tokyo".
      verbWord = next;
      i++;
    }
  };

  if (MODALS.has(first)) {
    modal = first;
    i++;
    skipAdverbs();
    verbWord = tokens[i]?.w ?? '';
    i++;
  } else if (AUX_DO.has(first)) {
    if (first === 'did') tense = 'past';
    i++;
    skipAdverbs();
    verbWord = tokens[i]?.w ?? '';
    i++;
  } else if (AUX_HAVE.has(first)) {
    if (first === 'had') tense = 'past';
    i++;
    const before = { i, neg, never };
    skipAdverbs();
    const next = tokens[i]?.w ?? '';
    if (next !== '' && (PAST_PARTICIPLES.has(next) || /ed$/u.test(next))) {
      tense = 'perfect';
      i++;
      verbWord = next;
      if (next === 'been') {
        verbWord = 'be';
        afterBe();
      }
    } else {
      // "has a car", "has no car": "have" is the main verb; "has not" before a noun is rare.
      verbWord = 'have';
      ({ i, neg, never } = before);
      skipAdverbs();
    }
  } else if (AUX_BE.has(first)) {
    if (first === 'was' || first === 'were') tense = 'past';
    i++;
    skipAdverbs();
    verbWord = 'be';
    afterBe();
  } else {
    verbWord = first;
    i++;
    if (IRREGULAR_PAST.has(first) || (/ed$/u.test(first) && first !== 'need')) tense = 'past';
  }
  skipAdverbs();

  let verb = verbWord === 'be' || PASSIVES.has(verbWord) ? verbWord : stem(verbWord);
  if (ANTI_LIKE.has(verb)) {
    verb = LIKE;
    neg = !neg;
  } else if (PRO_LIKE.has(verb)) {
    verb = LIKE;
  }
  // A thing "moved to Thursday" is rescheduled; a person "moved to Berlin" lives there (below).
  if (RESCHEDULE.has(verb) && tokens[i]?.w === 'to' && head !== '' && !rescheduled) {
    rescheduled = true;
    verb = 'be';
    tense = 'present';
    i++;
  }

  let comp = tokens.slice(i);
  const cut = comp.findIndex((t) => CLAUSE_CUT.has(t.w));
  if (cut >= 0) comp = comp.slice(0, cut);
  // "has no car": the negation sits in the object.
  if (comp[0]?.w === 'no') {
    neg = !neg;
    comp = comp.slice(1);
  }
  comp = comp.filter((t) => t.w !== 'not');
  while (comp.length > 0 && TRAILING_NOISE.has(comp[comp.length - 1]!.w)) comp = comp.slice(0, -1);

  return {
    owner,
    head,
    neg,
    never,
    tense,
    verb: modal ? `${modal}:${verb}` : verb,
    comp,
    cased,
    rescheduled,
  };
}
