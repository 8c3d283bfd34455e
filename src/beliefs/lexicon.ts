/**
 * The contradiction detector's lexicon: the word lists and tables its grammar reads, and the light
 * stemming that makes inflections of one word compare equal.
 */

import {
  ADVERBS as ENGLISH_ADVERBS,
  COLLOQUIAL_WORDS,
  IRREGULAR_PLURALS,
  IRREGULAR_VERBS,
  union,
  wordSet,
} from '../text/english.js';

export const DETERMINERS = wordSet('the a an this that these those some any every each');
export const ARTICLES = wordSet('a an the');
export const POSSESSIVE_PRONOUNS: Readonly<Record<string, string>> = {
  my: '',
  your: '',
  our: '',
  their: '',
  its: '',
  his: 'he',
  her: 'she',
};
/**
 * Subjects that stand for whoever the partition is about: they match any subject. "he" and "she"
 * match names and each other's own kind, not each other.
 */
export const GENERIC_SUBJECTS: Readonly<Record<string, string>> = {
  i: '',
  me: '',
  we: '',
  you: '',
  they: '',
  them: '',
  it: '',
  user: '',
  customer: '',
  client: '',
  person: '',
  patient: '',
  buyer: '',
  human: '',
  he: 'he',
  him: 'he',
  she: 'she',
};
/** People and things one has: "Mom lives in Rome" is about the mother, not the subject. */
export const RELATION_NOUNS = wordSet(
  'wife husband partner spouse son daughter child kid kids children baby mother father mom mum dad parent parents ' +
    'brother sister sibling siblings cousin aunt uncle niece nephew grandmother grandfather grandma grandpa ' +
    'girlfriend boyfriend fiance fiancee friend colleague boss manager team company family roommate neighbor ' +
    'landlord doctor dog cat pet',
);
/** Time words too: a clause's value is read without them, where the extractor moves them to the end. */
export const ADVERBS = union(ENGLISH_ADVERBS, wordSet('nowadays today'));
/** Trailing words that do not change what a complement says. */
export const TRAILING_NOISE = wordSet('anymore now too either also yet currently nowadays today');
/** Words after which the rest of a clause is a reason or a contrast, not part of the value. */
export const CLAUSE_CUT = wordSet('because although though but whereas unless so');
/** Words that start a qualifier: what follows restricts when, where or how a statement holds. */
export const QUALIFIER_START = wordSet(
  'every each in on at during for when while if with before after until since daily weekly monthly often usually ' +
    'sometimes always most some from well fluently regularly occasionally twice once almost',
);
export const PREPOSITIONS = wordSet('in on at for with from to of by about under over near during since until and');
/** Hedges and evaluations: "name is hard to pronounce", "budget is tight" say nothing exact. */
export const HEDGES = wordSet(
  'probably maybe possibly likely perhaps unclear unknown not very too quite really so pretty rather fairly ' +
    'extremely kind sort hard easy difficult around about approximately roughly almost under over at least more less',
);

export const MONTHS: Readonly<Record<string, number>> = {
  january: 1,
  jan: 1,
  february: 2,
  feb: 2,
  march: 3,
  mar: 3,
  april: 4,
  apr: 4,
  may: 5,
  june: 6,
  jun: 6,
  july: 7,
  jul: 7,
  august: 8,
  aug: 8,
  september: 9,
  sep: 9,
  sept: 9,
  october: 10,
  oct: 10,
  november: 11,
  nov: 11,
  december: 12,
  dec: 12,
};
export const WEEKDAYS: Readonly<Record<string, number>> = {
  monday: 1,
  tuesday: 2,
  wednesday: 3,
  thursday: 4,
  friday: 5,
  saturday: 6,
  sunday: 7,
};
export const NUMBER_WORDS: Readonly<Record<string, number>> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};

/**
 * Irregular forms to their lemma, so that "has"/"have" and "children"/"kids" compare equal: the
 * irregular verbs and plurals and the colloquial words of src/text/english.ts, the auxiliaries, and
 * a few words the detector takes as one.
 */
const IRREGULAR: Readonly<Record<string, string>> = {
  ...Object.fromEntries(
    [...IRREGULAR_VERBS, ...IRREGULAR_PLURALS, ...COLLOQUIAL_WORDS].flatMap(([lemma = '', ...forms]) =>
      forms.map((form) => [form, lemma]),
    ),
  ),
  has: 'have',
  had: 'have',
  having: 'have',
  is: 'be',
  are: 'be',
  am: 'be',
  was: 'be',
  were: 'be',
  been: 'be',
  being: 'be',
  does: 'do',
  did: 'do',
  done: 'do',
  goes: 'go',
  persons: 'person',
};
export { IRREGULAR_PAST } from '../text/english.js';
export const PAST_PARTICIPLES = wordSet(
  'been had gone done eaten drunk spoken known left taken gotten got made begun run written woken worn kept ' +
    'met slept swum ridden taught thought felt bought driven come seen become grown born',
);

const STEM_CACHE = new Map<string, string>();
const STEM_CACHE_LIMIT = 20_000;

/** Light stemming so that inflections of one word compare equal; its output is never shown. */
export function stem(word: string): string {
  const cached = STEM_CACHE.get(word);
  if (cached !== undefined) return cached;
  const result = stemUncached(word);
  // Bounded: memory content is unbounded vocabulary, and a cache must not become a leak.
  if (STEM_CACHE.size >= STEM_CACHE_LIMIT) STEM_CACHE.clear();
  STEM_CACHE.set(word, result);
  return result;
}

function stemUncached(word: string): string {
  let w = IRREGULAR[word] ?? word;
  if (w.length <= 3) return w;
  if (/ie[sd]$/u.test(w)) return w.slice(0, -3) + 'i';
  if (/(ss|us|is)$/u.test(w)) return w;
  if (/(ch|sh|x|z|o)es$/u.test(w)) return w.slice(0, -2);
  if (/ing$/u.test(w) && w.length > 5) {
    w = w.slice(0, -3);
    if (/([^aeiouls])\1$/u.test(w)) w = w.slice(0, -1);
    return w.replace(/e$/u, '');
  }
  if (/ed$/u.test(w)) {
    w = w.slice(0, -2);
    if (/([^aeiouls])\1$/u.test(w)) w = w.slice(0, -1);
    return w.replace(/e$/u, '');
  }
  if (w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, -1);
  if (w.endsWith('y') && w.length > 3) return w.slice(0, -1) + 'i';
  return w.replace(/e$/u, '');
}

const stems = (list: string): ReadonlySet<string> => new Set(list.split(/\s+/u).filter(Boolean).map(stem));

/**
 * Verbs recognised after a subject ("Alice drinks coffee"). A sentence that starts with its verb
 * ("Drinks coffee") needs no entry: the first word of a subjectless memory is its verb.
 */
export const VERB_STEMS = stems(
  'live reside move relocate work prefer like love hate dislike enjoy adore eat drink smoke have own speak ' +
    'know play visit want need use drive wake go turn leave depart arrive start begin end finish take get make ' +
    'travel study learn teach read write watch listen run cook wear keep born plan hope attend belong sleep swim ' +
    'ride meet stay think believe feel support follow avoid weigh earn pay cost celebrate marry date open close',
);
export const LIKE = stem('like');
/** "dislikes tea" is the negation of "likes tea"; "loves tea" implies it. */
export const ANTI_LIKE = stems('dislike hate detest loathe');
export const PRO_LIKE = stems('love adore enjoy');
export const RESCHEDULE = stems('move reschedule postpone push change shift bring');
export const RESIDE = stems('live reside');
export const RELOCATE = stems('move relocate');
/** Participles after "is" that name a predicate of their own: "is based in", "was born on". */
export const PASSIVES = wordSet('born based located employed named called');

/**
 * Nouns naming a single-valued attribute of their owner ("Alice's budget is $5k"), by the kind of
 * value they take. A value of another kind ("the budget is tight") is a description, not a value.
 */
export const NUMERIC_HEADS = wordSet(
  'age budget salary income wage rent price cost fee rate height weight size capacity balance limit',
);
export const DATE_HEADS = wordSet('birthday birthdate deadline');
/** Names: in text that uses capitals, their value is capitalized ("name is Sam", not "name is hard"). */
export const NAME_HEADS = wordSet('name surname nickname hometown employer');
/** Codes: their value has a digit, an @ or a capital ("timezone is UTC+2", "email is a@b.c"). */
export const CODE_HEADS = wordSet('timezone number phone email address');
export const TEXT_HEADS = wordSet('occupation profession');
export const FUNCTIONAL_PREFIXES = wordSet('favorite preferred');

export const MARITAL = wordSet('single married divorced widowed separated engaged');
export const MEASURE_ADJECTIVES = wordSet('tall high long wide heavy deep');
/** Where one lives or works that is not a place name: "lives in a flat", "works at home". */
export const NON_PLACES = wordSet(
  'house flat apartment home city town village suburb suburbs countryside dorm area building night nights ' +
    'weekends weekend times least all office remote startup company hospital school',
);
/** A place value ends here: what follows is company, a start date or a role. */
export const PLACE_CUT = wordSet('with near since for from as and because but where which who last ago');
/** A place value with one of these holds only part of the time: "lives in Paris during the summer". */
export const PLACE_PART_TIME = wordSet(
  'during every when while until in on at most part half each sometimes occasionally mostly weekends weekdays ' +
    'summers winters summer winter seasonally part-time',
);
/**
 * Countries, states and continents: a place inside one of them is not a contradiction of it
 * ("lives in Paris" / "lives in France"), and without a gazetteer the only safe answer is "no".
 */
export const REGIONS = wordSet(
  'afghanistan albania algeria andorra angola argentina armenia australia austria azerbaijan bahamas bahrain ' +
    'bangladesh barbados belarus belgium belize benin bhutan bolivia bosnia botswana brazil brunei bulgaria ' +
    'burundi cambodia cameroon canada chad chile china colombia congo croatia cuba cyprus czechia denmark djibouti ' +
    'dominica ecuador egypt england eritrea estonia eswatini ethiopia fiji finland france gabon gambia georgia ' +
    'germany ghana greece grenada guatemala guinea guyana haiti honduras hungary iceland india indonesia iran iraq ' +
    'ireland israel italy jamaica japan jordan kazakhstan kenya kosovo kuwait kyrgyzstan laos latvia lebanon ' +
    'lesotho liberia libya liechtenstein lithuania luxembourg madagascar malawi malaysia maldives mali malta ' +
    'mauritania mauritius mexico moldova monaco mongolia montenegro morocco mozambique myanmar namibia nepal ' +
    'netherlands holland nicaragua niger nigeria norway oman pakistan panama paraguay peru philippines poland ' +
    'portugal qatar romania russia rwanda scotland senegal serbia singapore slovakia slovenia somalia spain sudan ' +
    'suriname sweden switzerland syria taiwan tajikistan tanzania thailand togo tunisia turkey turkiye uganda ' +
    'ukraine uk us usa america uruguay uzbekistan venezuela vietnam wales yemen zambia zimbabwe korea ' +
    'europe asia africa oceania antarctica scandinavia midwest ' +
    'alabama alaska arizona arkansas california colorado connecticut delaware florida hawaii idaho illinois ' +
    'indiana iowa kansas kentucky louisiana maine maryland massachusetts michigan minnesota mississippi missouri ' +
    'montana nebraska nevada ohio oklahoma oregon pennsylvania tennessee texas utah vermont virginia washington ' +
    'wisconsin wyoming quebec ontario alberta bavaria catalonia',
);
export const MULTIWORD_REGIONS = wordSet(
  [
    'costa_rica czech_republic dominican_republic el_salvador new_zealand north_korea south_korea north_macedonia',
    'saudi_arabia south_africa sri_lanka united_kingdom united_states great_britain north_america south_america',
    'latin_america middle_east east_coast west_coast bay_area new_hampshire new_jersey new_mexico new_york',
    'north_carolina north_dakota rhode_island south_carolina south_dakota west_virginia british_columbia',
  ].join(' '),
);
/** Contact channels, so "prefers email" and "prefers to be contacted by phone" compare. */
export const CHANNELS: Readonly<Record<string, string>> = {
  email: 'email',
  emails: 'email',
  mail: 'email',
  phone: 'phone',
  call: 'phone',
  calls: 'phone',
  telephone: 'phone',
  text: 'sms',
  texts: 'sms',
  sms: 'sms',
  slack: 'slack',
  whatsapp: 'whatsapp',
  post: 'post',
  letter: 'post',
  letters: 'post',
};
/**
 * Preferences exclude each other only along one dimension: "window seat" vs "aisle seat" do,
 * "morning meetings" vs "short meetings" do not.
 */
export const PREFERENCE_DIMENSIONS: readonly ReadonlySet<string>[] = [
  wordSet('morning mornings afternoon afternoons evening evenings night nights daytime nighttime'),
  wordSet('window aisle middle'),
  wordSet('dark light'),
  wordSet('hot cold iced warm'),
  wordSet('early late'),
  wordSet('formal casual informal'),
  wordSet('written verbal oral'),
  wordSet('online offline in-person remote virtual onsite'),
  wordSet('weekday weekdays weekend weekends'),
  wordSet('metric imperial'),
  wordSet('sweet savory savoury'),
];
