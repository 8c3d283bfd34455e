/**
 * What the deterministic extractor leaves out (hedged, leaning on the conversation, saying nothing,
 * asking for help) and what kind of fact it keeps.
 */

import { wordSet } from '../../text/english.js';
import type { FactKind } from '../extractor.js';
import { ADVERBS, lower, wordsOf } from './words.js';

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

export function isAnaphoric(clause: string): boolean {
  const list = wordsOf(clause);
  const last = list[list.length - 1];
  return list.some((w) => ANAPHORA.has(w)) || (last !== undefined && ANAPHORA_AT_END.has(last));
}

export function isHedged(clause: string): boolean {
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
export const REQUEST =
  /^(?:i|we)(?:'d| would)? (?:really |just |actually |also |still )*(?:need|want|like|love|would like|'d like)(?: some| your| a little| a bit of)? (?:help|assistance|advice|suggestions?|ideas?|recommendations?|a recommendation|you to)\b/iu;

/** What follows the subject says nothing: "I'm fine", "I agree", "I will". */
export function isFiller(clause: string): boolean {
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
