/**
 * English words that more than one reader of text needs: the contradiction detector (src/beliefs),
 * the deterministic extractor (src/extraction) and recall's word groups (src/text/word-groups.ts).
 * A list lives here once; where one reader must treat more words alike than the other, it adds
 * them to the shared list in its own module.
 */

/** The set of the words of a space-separated list. */
export const wordSet = (list: string): ReadonlySet<string> => new Set(list.split(/\s+/u).filter(Boolean));

export const union = (...sets: readonly ReadonlySet<string>[]): ReadonlySet<string> =>
  new Set(sets.flatMap((set) => [...set]));

export const MODALS = wordSet('can could will would should must may might shall');
/** The forms of "be" that carry a tense, and so can open a question or stand for a clause's verb. */
export const BE_FINITE = wordSet('is are am was were');
export const AUX_BE = union(BE_FINITE, wordSet('be been being'));
export const AUX_HAVE = wordSet('has have had');
export const AUX_DO = wordSet('does do did');
/** Adverbs that may stand between a subject and its verb: "Alice currently lives…", "I really like…". */
export const ADVERBS = wordSet(
  'also really usually always often sometimes just actually currently mostly only still already generally ' +
    'typically normally recently definitely now',
);
/** A list of word groups, each its forms separated by spaces, the groups by commas. */
const groups = (list: string): readonly (readonly string[])[] =>
  list
    .split(',')
    .map((group) => group.trim().split(/\s+/u))
    .filter((group) => group[0] !== '');

/**
 * Irregular verbs as base, past and past participle where it differs from the past; be, have and do
 * are stop words and left to the lists above. Verbs whose forms are as often other words ("a bit",
 * "this fall", "lead", "mean") are left out.
 */
export const IRREGULAR_VERBS = groups(`
  become became, begin began begun, blow blew blown, break broke broken, bring brought, build built,
  buy bought, catch caught, choose chose chosen, come came, dig dug, draw drew drawn, drink drank drunk,
  drive drove driven, eat ate eaten, feed fed, feel felt, fight fought, find found, fly flew flown,
  forget forgot forgotten, freeze froze frozen, get got gotten, give gave given, go went gone,
  grow grew grown, hang hung, hear heard, hide hid hidden, hold held, keep kept, know knew known, leave left,
  lend lent, lose lost, make made, meet met, pay paid, ride rode ridden, ring rang rung, run ran, say said,
  see saw seen, seek sought, sell sold, send sent, shake shook shaken, shoot shot, sing sang sung, sit sat,
  sleep slept, speak spoke spoken, spend spent, stand stood, steal stole stolen, stick stuck, swim swam swum,
  take took taken, teach taught, tell told, think thought, throw threw thrown, understand understood,
  wake woke woken, wear wore worn, win won, write wrote written`);
/** Plurals not formed with -s. */
export const IRREGULAR_PLURALS = groups(`child children, man men, woman women,
  person people, wife wives, foot feet, tooth teeth, mouse mice`);

/**
 * Standard words and the colloquial words and spellings of chat that say the same, the standard word
 * first: a question asks for "children" or "family", a conversation says "kids" or "fam". Only words
 * with no other common sense: "pic" joins "photo", "shot" (a gun's too) does not.
 */
export const COLLOQUIAL_WORDS = groups(`child kid kids, family fam, mother mom mum mama mommy,
  father dad daddy papa, brother bro, sister sis, grandmother grandma granny, grandfather grandpa,
  husband hubby, photo photograph picture pic pics, favorite favourite fave fav, vacation vacay,
  conversation convo, birthday bday, television tv, university uni, bicycle bike, information info,
  congratulations congrats, color colour, neighbor neighbour, theater theatre, business biz, puppy pup`);

/** Past tenses not formed with -ed. */
export const IRREGULAR_PAST = union(
  wordSet('was were had did'),
  new Set(IRREGULAR_VERBS.map((forms) => forms[1] ?? '')),
);
