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

/** Whether a clause is negated so far, and whether by "never", which negates it at every time. */
interface Polarity {
  readonly neg: boolean;
  readonly never: boolean;
}

const negated = (p: Polarity, byNever: boolean): Polarity => ({ neg: !p.neg, never: p.never || byNever });

/** Reads "not", "never" and adverbs from `from`: where the next other word is, and the polarity after them. */
function skipAdverbs(tokens: readonly Token[], from: number, polarity: Polarity): { at: number; polarity: Polarity } {
  let at = from;
  let p = polarity;
  for (; at < tokens.length; at++) {
    const w = tokens[at]!.w;
    if (w === 'not' || w === 'never') p = negated(p, w === 'never');
    else if (!ADVERBS.has(w)) break;
  }
  return { at, polarity: p };
}

/** The words before the verb: the subject's noun phrase, and the polarity its "not" and "never" give. */
function beforeVerb(tokens: readonly Token[], verbAt: number): { np: Token[]; polarity: Polarity } {
  const np: Token[] = [];
  let polarity: Polarity = { neg: false, never: false };
  for (const t of tokens.slice(0, verbAt)) {
    if (t.w === 'not' || t.w === 'never') polarity = negated(polarity, t.w === 'never');
    else if (!ADVERBS.has(t.w)) np.push(t);
  }
  return { np, polarity };
}

/** The verb group read: its main verb, modal, tense and polarity, and where the complement starts. */
interface VerbGroup {
  /** The main verb as said ('be' for a copula); a passive ("based") or a progressive ("living") as it is. */
  readonly word: string;
  /** '' without one. */
  readonly modal: string;
  readonly tense: Tense;
  /** A passive reschedule ("was moved to Thursday"): it says when the thing is now. */
  readonly rescheduled: boolean;
  readonly polarity: Polarity;
  readonly end: number;
}

/** After a form of "be" at `at`: "based in", "born on", "called", a reschedule ("moved to"), a progressive. */
function afterBe(tokens: readonly Token[], at: number): { word: string; rescheduled: boolean; end: number } {
  const next = tokens[at]?.w ?? '';
  if (PASSIVES.has(next)) return { word: next === 'called' ? 'named' : next, rescheduled: false, end: at + 1 };
  if (RESCHEDULE.has(stem(next)) && tokens[at + 1]?.w === 'to') return { word: 'be', rescheduled: true, end: at + 2 };
  // Progressive: "is living in Tokyo" is "lives in Tokyo".
  if (/ing$/u.test(next) && next.length > 4) return { word: next, rescheduled: false, end: at + 1 };
  return { word: 'be', rescheduled: false, end: at };
}

/** The auxiliaries and the main verb from the verb's index, by what the first of them is. */
function auxiliariesAndVerb(tokens: readonly Token[], verbAt: number, polarity: Polarity): VerbGroup {
  const first = tokens[verbAt]!.w;
  const plain = { modal: '', rescheduled: false };
  if (MODALS.has(first) || AUX_DO.has(first)) {
    const after = skipAdverbs(tokens, verbAt + 1, polarity);
    const modal = MODALS.has(first) ? first : '';
    const tense: Tense = !modal && first === 'did' ? 'past' : 'present';
    return { ...plain, word: tokens[after.at]?.w ?? '', modal, tense, polarity: after.polarity, end: after.at + 1 };
  }
  if (AUX_HAVE.has(first)) {
    const after = skipAdverbs(tokens, verbAt + 1, polarity);
    const next = tokens[after.at]?.w ?? '';
    if (next === 'been') {
      const be = afterBe(tokens, after.at + 1);
      return { ...plain, ...be, tense: be.rescheduled ? 'present' : 'perfect', polarity: after.polarity };
    }
    if (next !== '' && (PAST_PARTICIPLES.has(next) || /ed$/u.test(next))) {
      return { ...plain, word: next, tense: 'perfect', polarity: after.polarity, end: after.at + 1 };
    }
    // "has a car", "has no car": "have" is the main verb; "has not" before a noun is rare.
    return { ...plain, word: 'have', tense: first === 'had' ? 'past' : 'present', polarity, end: verbAt + 1 };
  }
  if (AUX_BE.has(first)) {
    const after = skipAdverbs(tokens, verbAt + 1, polarity);
    const be = afterBe(tokens, after.at);
    // "was moved to Thursday" says when it is now.
    const tense: Tense = !be.rescheduled && (first === 'was' || first === 'were') ? 'past' : 'present';
    return { ...plain, ...be, tense, polarity: after.polarity };
  }
  const past = IRREGULAR_PAST.has(first) || (/ed$/u.test(first) && first !== 'need');
  return { ...plain, word: first, tense: past ? 'past' : 'present', polarity, end: verbAt + 1 };
}

/** The verb's stem, with liking and its opposites as one verb: "adores" is "like", "dislikes" is "not like". */
function predicateVerb(word: string): { verb: string; flips: boolean } {
  const verb = word === 'be' || PASSIVES.has(word) ? word : stem(word);
  if (ANTI_LIKE.has(verb)) return { verb: LIKE, flips: true };
  return { verb: PRO_LIKE.has(verb) ? LIKE : verb, flips: false };
}

/** The words after the verb up to a clause cut, without noise; a leading "no" negates ("has no car"). */
function complementOf(tokens: readonly Token[], from: number): { comp: Token[]; negates: boolean } {
  let comp = tokens.slice(from);
  const cut = comp.findIndex((t) => CLAUSE_CUT.has(t.w));
  if (cut >= 0) comp = comp.slice(0, cut);
  const negates = comp[0]?.w === 'no';
  if (negates) comp = comp.slice(1);
  comp = comp.filter((t) => t.w !== 'not');
  while (comp.length > 0 && TRAILING_NOISE.has(comp[comp.length - 1]!.w)) comp = comp.slice(0, -1);
  return { comp, negates };
}

/**
 * One clause, read in four steps: the subject before the verb, the verb group (auxiliaries, adverbs,
 * negation, passives), the predicate's verb, and the complement after it.
 */
function parseClause(tokens: readonly Token[], previous: Clause | undefined, cased: boolean): Clause | undefined {
  const verbAt = findVerb(tokens);
  if (verbAt < 0) return undefined;
  const before = beforeVerb(tokens, verbAt);
  // A subjectless clause after "and" continues the previous clause's subject.
  const { owner, head } = before.np.length === 0 && previous ? previous : subjectOf(before.np);
  const read = auxiliariesAndVerb(tokens, verbAt, before.polarity);
  const group = { ...read, ...skipAdverbs(tokens, read.end, read.polarity) };
  const predicate = predicateVerb(group.word);
  // A thing "moved to Thursday" is rescheduled; a person "moved to Berlin" lives there.
  const thingMoved =
    RESCHEDULE.has(predicate.verb) && tokens[group.at]?.w === 'to' && head !== '' && !group.rescheduled;
  const verb = thingMoved ? 'be' : predicate.verb;
  const { comp, negates } = complementOf(tokens, thingMoved ? group.at + 1 : group.at);
  return {
    owner,
    head,
    neg: (group.polarity.neg !== predicate.flips) !== negates,
    never: group.polarity.never,
    tense: thingMoved ? 'present' : group.tense,
    verb: group.modal ? `${group.modal}:${verb}` : verb,
    comp,
    cased,
    rescheduled: group.rescheduled || thingMoved,
  };
}
