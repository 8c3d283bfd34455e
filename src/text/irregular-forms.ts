import { IRREGULAR_PLURALS, IRREGULAR_VERBS } from './english.js';

/**
 * Words whose forms full-text stemming does not join: it reduces "painted" and "painting" to
 * "paint", but leaves "went" apart from "go" and "children" apart from "child". A question asks in
 * the base form ("When did she go…", "What did he make…") while a conversation tells in the past
 * ("I went…", "I made…"), so recall matches a query word with every form of its group
 * (src/db/fulltext.ts, queryTerms): the irregular verbs and plurals of src/text/english.ts.
 */
const GROUP_OF = new Map<string, string>(
  [...IRREGULAR_VERBS, ...IRREGULAR_PLURALS].flatMap((forms) => forms.map((form) => [form, forms.join(' ')])),
);

/** The groups (each its forms, space-separated) that the words of `text` belong to, in order of first use. */
export function irregularForms(text: string): string[] {
  const found = new Set<string>();
  for (const word of text.toLowerCase().split(/[^a-z]+/u)) {
    const group = GROUP_OF.get(word);
    if (group) found.add(group);
  }
  return [...found];
}
