import { COLLOQUIAL_WORDS, IRREGULAR_PLURALS, IRREGULAR_VERBS } from './english.js';

/**
 * Words that full-text stemming does not join although they say the same: it reduces "painted" and
 * "painting" to "paint", but leaves "went" apart from "go", "children" from "child" and "kids" from
 * both. A question asks in the base form and the standard word ("When did she go…", "What do her
 * children like?") while a conversation tells in the past and in chat ("I went…", "the kids love…"),
 * so recall matches a query word with every word of its group (src/db/fulltext.ts, queryTerms): the
 * irregular verbs, irregular plurals and colloquial words of src/text/english.ts.
 */

const VOWEL = /[aeiou]/u;

/**
 * The regular inflections of a verb's base form: "goes", "going", "making", "running", "flies".
 * Stemming reduces them to the base, one of the group's lexemes, so "going" finds "went" as "go"
 * does. Every spelling rule's candidate is kept, not only the right one: a form that is no English
 * word is never written, and so never matches.
 */
function inflections(base: string): string[] {
  const last = base.at(-1) ?? '';
  const consonantEnd = !VOWEL.test(last) && VOWEL.test(base.at(-2) ?? '');
  return [
    base + 's',
    base + 'es',
    base + 'ing',
    ...(base.endsWith('e') ? [base.slice(0, -1) + 'ing'] : []),
    ...(consonantEnd ? [base + last + 'ing'] : []),
    ...(base.endsWith('y') && !VOWEL.test(base.at(-2) ?? '') ? [base.slice(0, -1) + 'ies'] : []),
  ];
}

/** Groups that share a word are one group: "child children" and "child kid kids". */
function merged(groups: readonly (readonly string[])[]): string[][] {
  const result: string[][] = [];
  for (const group of groups) {
    const into = result.find((words) => group.some((word) => words.includes(word)));
    if (into) into.push(...group.filter((word) => !into.includes(word)));
    else result.push([...group]);
  }
  return result;
}

const VERB_BASES = new Set(IRREGULAR_VERBS.map(([base = '']) => base));

const GROUP_OF = new Map<string, string>(
  merged([...IRREGULAR_VERBS, ...IRREGULAR_PLURALS, ...COLLOQUIAL_WORDS]).flatMap((group) => {
    const [first = ''] = group;
    const written = VERB_BASES.has(first) ? [...inflections(first), ...group] : group;
    return written.map((word) => [word, group.join(' ')] as const);
  }),
);

/** The groups (each its words, space-separated) that the words of `text` belong to, in order of first use. */
export function wordGroups(text: string): string[] {
  const found = new Set<string>();
  for (const word of text.toLowerCase().split(/[^a-z]+/u)) {
    const group = GROUP_OF.get(word);
    if (group) found.add(group);
  }
  return [...found];
}
