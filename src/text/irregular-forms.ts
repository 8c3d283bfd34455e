/**
 * Words whose forms full-text stemming does not join: it reduces "painted" and "painting" to
 * "paint", but leaves "went" apart from "go" and "children" apart from "child". A question asks in
 * the base form ("When did she go…", "What did he make…") while a conversation tells in the past
 * ("I went…", "I made…"), so recall matches a query word with every form of its group
 * (src/db/fulltext.ts, queryTerms). Irregular verbs (without be, have and do, which are stop words)
 * and irregular plurals. Groups with a form that is also a common other word ("a bit", "this fall",
 * "lead", "mean", "lives") are left out.
 */
const GROUPS: readonly string[] = `
  become became, begin began begun, blow blew blown, break broke broken, bring brought, build built,
  buy bought, catch caught, choose chose chosen, come came, dig dug, draw drew drawn, drink drank drunk,
  drive drove driven, eat ate eaten, feed fed, feel felt, fight fought, find found, fly flew flown,
  forget forgot forgotten, freeze froze frozen, get got gotten, give gave given, go went gone,
  grow grew grown, hang hung, hear heard, hide hid hidden, hold held, keep kept, know knew known, leave left,
  lend lent, lose lost, make made, meet met, pay paid, ride rode ridden, ring rang rung, run ran, say said,
  see saw seen, seek sought, sell sold, send sent, shake shook shaken, shoot shot, sing sang sung, sit sat,
  sleep slept, speak spoke spoken, spend spent, stand stood, steal stole stolen, stick stuck, swim swam swum,
  take took taken, teach taught, tell told, think thought, throw threw thrown, understand understood,
  wake woke woken, wear wore worn, win won, write wrote written, child children, man men, woman women,
  person people, wife wives, foot feet, tooth teeth, mouse mice`
  .split(',')
  .map((group) => group.trim().replace(/\s+/gu, ' '))
  .filter(Boolean);

const GROUP_OF = new Map<string, string>(GROUPS.flatMap((group) => group.split(' ').map((form) => [form, group])));

/** The groups (each its forms, space-separated) that the words of `text` belong to, in order of first use. */
export function irregularForms(text: string): string[] {
  const found = new Set<string>();
  for (const word of text.toLowerCase().split(/[^a-z]+/u)) {
    const group = GROUP_OF.get(word);
    if (group) found.add(group);
  }
  return [...found];
}
