/**
 * Questions about time and memories that state one. The answer to "When did…", "How long…" or
 * "Which year…" is a time expression, a word the question cannot contain; a memory that holds one
 * is likelier to answer it (FUSION.timeCueBoost).
 *
 * The grammar below follows the kinds of time expression that temporal annotation (TimeML's
 * TIMEX3: dates, times, durations, sets, and references to the past or future) names, written from
 * English grammar rather than from any evaluation's turns, so that it reads conversations it was
 * never tuned on as well as the ones it was measured on (docs/decisions/0013).
 */

const MONTH_NAMES = 'january|february|march|april|may|june|july|august|september|october|november|december';
const MONTHS = `${MONTH_NAMES}|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec`;
const WEEKDAYS = 'monday|tuesday|wednesday|thursday|friday|saturday|sunday';
/** "sat", "sun" and "wed" are words too: an abbreviated weekday counts only after last, next, on… */
const WEEKDAY_ABBREVIATIONS = 'mon|tues?|wed|thurs?|fri|sat|sun';
const NUMBERS =
  '\\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|' +
  'seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|(a )?few|(a )?couple( of)?|several|many|some|' +
  '(a )?dozen|dozens of|hundreds of|half an?';
const UNITS =
  'years?|months?|weeks?|weekends?|days?|nights?|hours?|minutes?|decades?|centur(y|ies)|fortnights?|semesters?|seasons?|summers?|winters?';
const PERIODS = `week|month|year|night|time|summer|winter|spring|fall|autumn|weekend|morning|afternoon|evening|decade|century|semester|season|holidays?|${WEEKDAYS}|${WEEKDAY_ABBREVIATIONS}`;
const PREPOSITIONS =
  'in|on|since|until|till|by|during|from|before|after|around|through|throughout|into|last|next|this|early|late|mid|of|back in';
/** A day of the month; after a preposition alone it needs its ordinal ("on the 5th", not "in 5"). */
const DAY = '\\d{1,2}(st|nd|rd|th)?';
const ORDINAL_DAY = '\\d{1,2}(st|nd|rd|th)';
const HOLIDAYS =
  "christmas|xmas|thanksgiving|easter|halloween|new year'?s?( eve| day)?|valentine'?s( day)?|hanukkah|diwali|ramadan|passover|" +
  "independence day|fourth of july|memorial day|labor day|mother'?s day|father'?s day";

/**
 * A time expression, by kind. A bare date ("8 May 2023") is left out: a store may stamp every memory
 * with its date, which would then tell nothing apart; a date counts after "on" ("on June 5"). So is
 * what only says "now" ("these days", "currently"): it cannot answer "when". Matched in JavaScript
 * on the text recall fetches of each candidate: the database's regular expressions cost about 20 µs
 * a memory, a millisecond or more of a small subject's recall.
 */
const TIME_EXPRESSIONS = {
  /** Days and moments named from today, and references to the past or future. */
  relative:
    'yesterday|today|tonight|tomorrow|ago|recently|lately|since|weekends?|the other day|back then|earlier|soon|later on|someday|a while (back|ago)',
  /** "last week", "next Tuesday", "this summer", "every morning". */
  anchored: `(last|next|this|past|coming|previous|following|every|each|that|one|same) (${PERIODS})`,
  /** Durations: "two years", "a few weeks", "for years", "for a while". */
  duration: `(${NUMBERS}) (${UNITS})|(for|in|over) (years|months|weeks|ages|decades|a while|a long time|so long)`,
  weekday: '(mon|tues|wednes|thurs|fri|satur|sun)days?',
  /** A month, year, decade or day of the month after a preposition: "in May", "since 2016", "in the 90s", "on the 5th". */
  calendar: `(${PREPOSITIONS}) (the )?(${MONTHS}|(19|20)\\d\\ds?|${ORDINAL_DAY}|(early|late|mid)[- ]((19|20)?\\d0s)|((19|20)?\\d0s))`,
  /** A date after "on": "on June 5", "on 5 June", "on the 5th of June". */
  date: `on (the )?(((${MONTHS})\\.? ${DAY})|(${DAY} (of )?(${MONTHS})))`,
  season:
    '(in|during|over|for|through|throughout) (the )?(summer|winter|spring|fall|autumn|holidays|morning|afternoon|evening|night)',
  holiday: HOLIDAYS,
  /** Times of day: "at 5 pm", "7:30am", "noon". */
  clock: "\\d{1,2}(:\\d\\d)? ?(am|pm|a\\.m\\.|p\\.m\\.)|noon|midnight|o'clock",
  /** How often: "twice a week", "three times a year", "weekly". */
  frequency:
    '(once|twice|\\d+ times|(three|four|five|several|a few) times) (a|per|every|each) (day|week|month|year)|daily|weekly|monthly|yearly|annually',
  /** Periods of a life: "when I was a kid", "growing up", "in college". */
  lifetime:
    '(when|since) (i|we|he|she|they) (was|were) (a kid|a child|little|young|younger|a teen(ager)?|in (high )?school|in college)|' +
    'growing up|as a (kid|child|teen(ager)?)|in (high school|college|my twenties|my teens)|childhood',
  /** Occasions that date a story: "the first time", "our anniversary", "my birthday". */
  occasion: '(first|last) time|anniversary|birthday',
} as const;

const TIME_EXPRESSION = new RegExp(`\\b(${Object.values(TIME_EXPRESSIONS).join('|')})\\b`, 'i');

/** How much of a memory's text the time cue reads: the start of a long memory, where its time usually is. */
export const TIME_CUE_CHARS = 1000;

/** The text (its first TIME_CUE_CHARS) states a time. */
export const statesTime = (text: string): boolean => TIME_EXPRESSION.test(text.slice(0, TIME_CUE_CHARS));

const TIME_UNITS = 'years?|months?|weeks?|days?|hours?|minutes?|decades?';

const ASKS_TIME = new RegExp(
  [
    '\\bwhen\\b',
    '\\bhow (long|often|old|recently|soon|frequently)\\b',
    '\\b(what|which) (year|month|day|date|time|week|season|decade|age)\\b',
    '\\bat what (age|point|time)\\b',
    `\\bhow many (${TIME_UNITS})\\b`,
    '\\b(yesterday|last (week|month|year|weekend))\\b',
  ].join('|'),
  'i',
);

/** A month by its capitalized name ("may" is a verb too) or a year. */
const NAMES_TIME = new RegExp(`\\b(${MONTH_NAMES.replace(/\b[a-z]/g, (c) => c.toUpperCase())}|(19|20)[0-9][0-9])\\b`);

/** The query asks about a time ("When…", "How long…", "Which year…") or within one ("…in May"). */
export const asksAboutTime = (query: string): boolean => ASKS_TIME.test(query) || NAMES_TIME.test(query);
