/**
 * Questions about time and memories that state one. The answer to "When did…", "How long…" or
 * "Which year…" is a time expression, a word the question cannot contain; a memory that holds one
 * is likelier to answer it (FUSION.timeCueBoost). On the LoCoMo dev conversations 86% of the
 * evidence turns of temporal questions hold such an expression, against 16% of all turns.
 */

const MONTHS = 'january|february|march|april|may|june|july|august|september|october|november|december';
const UNITS = 'years?|months?|weeks?|days?|hours?';
const NUMBERS = '\\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|couple of|several';

/**
 * A time expression as people say it: relative days and periods, durations, weekdays, and a month
 * or year after a preposition. A bare date ("8 May 2023") is left out: a store may stamp every
 * memory with its date, which would then tell nothing apart. Matched in JavaScript on the text recall
 * fetches of each candidate: the database's regular expressions cost about 20 µs a memory, a
 * millisecond or more of a small subject's recall.
 */
const TIME_EXPRESSION = new RegExp(
  '\\b(' +
    [
      'yesterday|today|tonight|tomorrow|ago|recently|lately|since|weekend',
      '(last|next|this|past|coming) (week|month|year|night|time|summer|winter|spring|fall|autumn|weekend|morning|evening)',
      `(${NUMBERS}) (${UNITS})`,
      '(mon|tues|wednes|thurs|fri|satur|sun)days?',
      `(in|since|until|by|last|next|this|early|late|mid|of) (${MONTHS}|(19|20)[0-9][0-9])`,
    ].join('|') +
    ')\\b',
  'i',
);

/** How much of a memory's text the time cue reads: the start of a long memory, where its time usually is. */
export const TIME_CUE_CHARS = 1000;

/** The text (its first TIME_CUE_CHARS) states a time. */
export const statesTime = (text: string): boolean => TIME_EXPRESSION.test(text.slice(0, TIME_CUE_CHARS));

const ASKS_TIME = new RegExp(
  [
    '\\bwhen\\b',
    '\\bhow (long|often|old)\\b',
    '\\b(what|which) (year|month|day|date|time|week|season)\\b',
    `\\bhow many (${UNITS})\\b`,
    '\\b(yesterday|last (week|month|year|weekend))\\b',
  ].join('|'),
  'i',
);

/** A month by its capitalized name ("may" is a verb too) or a year. */
const NAMES_TIME = new RegExp(`\\b(${MONTHS.replace(/\b[a-z]/g, (c) => c.toUpperCase())}|(19|20)[0-9][0-9])\\b`);

/** The query asks about a time ("When…", "How long…", "Which year…") or within one ("…in May"). */
export const asksAboutTime = (query: string): boolean => ASKS_TIME.test(query) || NAMES_TIME.test(query);
