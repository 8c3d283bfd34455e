/**
 * English words that more than one reader of text needs: the contradiction detector (src/beliefs)
 * and the deterministic extractor (src/extraction). A list lives here once; where one reader must
 * treat more words alike than the other, it adds them to the shared list in its own module.
 */

export const words = (list: string): ReadonlySet<string> => new Set(list.split(/\s+/u).filter(Boolean));

export const union = (...sets: readonly ReadonlySet<string>[]): ReadonlySet<string> =>
  new Set(sets.flatMap((set) => [...set]));

export const MODALS = words('can could will would should must may might shall');
/** The forms of "be" that carry a tense, and so can open a question or stand for a clause's verb. */
export const BE_FINITE = words('is are am was were');
export const AUX_BE = union(BE_FINITE, words('be been being'));
export const AUX_HAVE = words('has have had');
export const AUX_DO = words('does do did');
/** Adverbs that may stand between a subject and its verb: "Alice currently lives…", "I really like…". */
export const ADVERBS = words(
  'also really usually always often sometimes just actually currently mostly only still already generally ' +
    'typically normally recently definitely now',
);
/** Past tenses not formed with -ed. */
export const IRREGULAR_PAST = words(
  'was were had did went ate drank knew left took got made began ran wrote woke wore kept met slept swam rode ' +
    'taught thought felt bought drove came saw became grew',
);
