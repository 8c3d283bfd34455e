/**
 * The single-valued (functional) attribute a clause gives one of ("lives in Paris": residence), and
 * its value, with preferences compared along one dimension.
 */

import {
  ARTICLES,
  CHANNELS,
  HEDGES,
  MARITAL,
  MEASURE_ADJECTIVES,
  MULTIWORD_REGIONS,
  NON_PLACES,
  PLACE_CUT,
  PLACE_PART_TIME,
  PREFERENCE_DIMENSIONS,
  PREPOSITIONS,
  QUALIFIER_START,
  REGIONS,
  RELOCATE,
  RESIDE,
  stem,
} from './lexicon.js';
import { headKind, type Clause, type HeadKind, type Token } from './statement.js';
import { isTemporal, numberOf, parseValue, TEMPORAL_PREPOSITIONS, type Comparison, type Value } from './values.js';
import { wordSet } from '../text/english.js';

interface Preference {
  readonly value: string;
  /** A comparative names its alternatives: "tea over coffee" → [coffee, tea]. */
  readonly among: readonly string[];
  /** What the value is a choice of: 'channel', a dimension, or '' when unknown. */
  readonly category: string;
  readonly qualifier: string;
}

interface Fact {
  /** Which single-valued attribute, including whose and of what. */
  readonly attr: string;
  readonly value: Value;
  readonly preference?: Preference;
}

const IN_AT = wordSet('in at');
const TO = wordSet('to');
const AT_FOR_BY = wordSet('at for by');
const ON_IN = wordSet('on in');

function afterPreposition(comp: readonly Token[], preps: ReadonlySet<string>): readonly Token[] | undefined {
  return comp.length > 1 && preps.has(comp[0]!.w) ? comp.slice(1) : undefined;
}

function isRegion(ws: readonly string[]): boolean {
  const [a, b] = ws;
  return (a !== undefined && REGIONS.has(a)) || (b !== undefined && MULTIWORD_REGIONS.has(`${a}_${b}`));
}

/** A named place or organisation, or undefined when the words are not one ("a flat", "night"). */
function placeValue(ts: readonly Token[] | undefined, cased: boolean): Value | undefined {
  if (!ts || ts.length === 0) return undefined;
  let rest = ts;
  if (rest[0]!.w === 'a' || rest[0]!.w === 'an') return undefined;
  if (rest[0]!.w === 'the') rest = rest.slice(1);
  const name = rest[0];
  // In text that uses capitals, a place name is capitalized: "lives in fear", "works at night" are not.
  if (!name || (cased && !name.cap) || NON_PLACES.has(name.w)) return undefined;
  const end = rest.findIndex((t, i) => i > 0 && (PLACE_CUT.has(t.w) || PLACE_PART_TIME.has(t.w)));
  // "lives in Paris during the summer" may hold alongside "lives in Berlin".
  if (end > 0 && PLACE_PART_TIME.has(rest[end]!.w)) return undefined;
  const ws = (end > 0 ? rest.slice(0, end) : rest).map((t) => t.w.replace(/,$/u, '')).filter((w) => w !== '');
  return ws.length > 0 ? { kind: 'text', words: ws, region: isRegion(ws) } : undefined;
}

function ageValue(comp: readonly Token[]): Value | undefined {
  let ws = comp.map((t) => t.w);
  if (ws[0] === 'aged') ws = ws.slice(1);
  const n = ws.length > 0 ? numberOf(ws[0]!) : undefined;
  if (n === undefined) return undefined;
  const rest = ws.slice(1).join(' ');
  return rest === '' || /^(years?|yrs?)( old)?$|^yo$/u.test(rest) ? { kind: 'number', n, unit: '' } : undefined;
}

/** A value for a functional head, if it has the kind the head takes. */
function headValue(kind: HeadKind, comp: readonly Token[], cased: boolean): Value | undefined {
  const value = parseValue(comp);
  if (kind === 'numeric') return value.kind === 'number' || value.kind === 'money' ? value : undefined;
  if (kind === 'date') return value.kind === 'date' || value.kind === 'weekday' ? value : undefined;
  if (value.kind === 'money' || isTemporal(value)) return value;
  // Names and codes are compared as words: "5 Main St" is an address, not five of something.
  const ws = value.kind === 'text' ? value.words : comp.map((t) => t.w).filter((x) => !ARTICLES.has(x));
  if (ws.length === 0 || ws.length > 4 || HEDGES.has(ws[0]!)) return undefined;
  const original = comp.filter((t) => !ARTICLES.has(t.w));
  if (kind === 'name' && cased && !original[0]?.cap) return undefined;
  if (kind === 'code' && !original.some((t) => t.cap || /[\d@]/u.test(t.w))) return undefined;
  return { kind: 'text', words: ws };
}

function dimensionOf(word: string): number {
  return PREFERENCE_DIMENSIONS.findIndex((d) => d.has(word));
}

function preferenceOf(comp: readonly Token[]): Preference | undefined {
  let ws = comp.map((t) => t.w);
  let channelled = false;
  // "to be contacted by email", "being reached via phone", "contact through Slack".
  const via = ws.findIndex((w) => w === 'by' || w === 'via' || w === 'through');
  if (
    via > 0 &&
    via + 1 < ws.length &&
    ws.slice(0, via).some((w) => /^(contact|reach|call|notif|communicat)/u.test(w))
  ) {
    ws = ws.slice(via + 1);
    channelled = true;
  }
  ws = ws.filter((w) => !ARTICLES.has(w));
  if (ws.length === 0) return undefined;
  const q = ws.findIndex((w, i) => i > 0 && QUALIFIER_START.has(w) && w !== 'over');
  const qualifier = q > 0 ? ws.slice(q).join(' ') : '';
  if (q > 0) ws = ws.slice(0, q);
  const channel = (w: string): string => CHANNELS[w] ?? w;
  const over = ws.findIndex((w, i) => i > 0 && (w === 'over' || w === 'to'));
  if (over > 0) {
    const value = ws.slice(0, over).map(channel).join(' ');
    const other = ws
      .slice(over + 1)
      .map(channel)
      .join(' ');
    return { value, among: [value, other].sort(), category: '', qualifier };
  }
  const last = ws[ws.length - 1]!;
  if (ws.length <= 2 && (channelled || last in CHANNELS || ws[0]! in CHANNELS)) {
    const c = CHANNELS[ws[0]!] ?? CHANNELS[last];
    if (c) return { value: c, among: [], category: 'channel', qualifier };
  }
  // "window seat" vs "aisle seat": one noun, modifiers along one dimension.
  const dimension = dimensionOf(ws[0]!);
  const category = dimension >= 0 ? `${dimension}:${ws.length > 1 ? stem(last) : ''}` : '';
  return { value: ws.join(' '), among: [], category, qualifier };
}

export function functionalFactOf(c: Clause): Fact | undefined {
  if (c.neg) return undefined;
  const { comp, head, verb, tense, cased } = c;
  const present = tense === 'present';
  const scope = head === '' ? '' : `${head}:`;
  const w = (k: number): string => comp[k]?.w ?? '';

  if (verb === 'be') {
    if (!present) return undefined;
    if (head === '') {
      const age = ageValue(comp);
      if (age) return { attr: 'age', value: age };
      const n = comp.length === 3 ? numberOf(w(0)) : undefined;
      if (n !== undefined && MEASURE_ADJECTIVES.has(w(2))) {
        return { attr: `measure:${w(2)}`, value: { kind: 'number', n, unit: w(1) } };
      }
      if (MARITAL.has(w(0)) && (comp.length === 1 || w(1) === 'to')) {
        return { attr: 'marital', value: { kind: 'text', words: [w(0)] } };
      }
      return undefined;
    }
    const kind = headKind(head);
    if (kind === undefined || c.rescheduled) {
      // Something scheduled has one time: "the meeting is on Monday".
      const value = parseValue(comp);
      if (isTemporal(value)) return { attr: `${head}@${value.kind}`, value };
      const age = c.rescheduled ? undefined : ageValue(comp);
      return age ? { attr: `${head}:age`, value: age } : undefined;
    }
    const value = headValue(kind, comp, cased);
    return value ? { attr: `${head}@${isTemporal(value) ? 'when' : 'value'}`, value } : undefined;
  }

  if (RESIDE.has(verb) || verb === 'based' || verb === 'located') {
    if (!present) return undefined;
    const place = placeValue(afterPreposition(comp, IN_AT), cased);
    return place ? { attr: `${scope}residence`, value: place } : undefined;
  }
  if (RELOCATE.has(verb) && head === '' && c.tense !== 'perfect') {
    // "Moved to Berlin" says where one lives now.
    const place = placeValue(afterPreposition(comp, TO), cased);
    return place ? { attr: 'residence', value: place } : undefined;
  }
  if (verb === stem('work') || verb === 'employed') {
    if (!present) return undefined;
    if (w(0) === 'as') {
      const role = comp.slice(1).filter((t) => !ARTICLES.has(t.w));
      const value = headValue('text', role, cased);
      return value ? { attr: `${scope}occupation`, value } : undefined;
    }
    const employer = placeValue(afterPreposition(comp, AT_FOR_BY), cased);
    return employer ? { attr: `${scope}employer`, value: employer } : undefined;
  }
  if (verb === stem('prefer')) {
    if (!present) return undefined;
    const preference = preferenceOf(comp);
    return preference ? { attr: `${scope}preference`, value: { kind: 'text', words: [] }, preference } : undefined;
  }
  if (verb === stem('turn') && head === '') {
    const age = ageValue(comp);
    return age ? { attr: 'age', value: age } : undefined;
  }
  if (verb === 'born') {
    const rest = afterPreposition(comp, ON_IN);
    if (!rest) return undefined;
    const value = parseValue(rest);
    if (value.kind === 'date') return { attr: `${scope}birth@date`, value };
    const place = placeValue(rest, cased);
    return place ? { attr: `${scope}birth@place`, value: place } : undefined;
  }
  if (verb === 'named' && present) {
    const value = headValue('name', comp, cased);
    return value ? { attr: `${scope}name@value`, value } : undefined;
  }
  if (verb === stem('weigh') && present) {
    const n = numberOf(w(0));
    return n !== undefined ? { attr: `${scope}weight@value`, value: { kind: 'number', n, unit: w(1) } } : undefined;
  }
  if (verb === stem('have') && present) {
    // "has 2 kids" is a count; "has a dog" is not one: one may have a dog and a cat.
    const n = comp.length >= 2 ? numberOf(w(0)) : undefined;
    if (n === undefined) return undefined;
    const ws = comp.map((t) => t.w);
    const nounEnd = ws.findIndex((x, k) => k > 0 && PREPOSITIONS.has(x));
    const noun = ws.slice(1, nounEnd > 0 ? nounEnd : undefined);
    const last = noun[noun.length - 1];
    if (!last) return undefined;
    // "2 meetings on Monday" and "3 meetings on Tuesday" count different things.
    const andAt = ws.indexOf('and', nounEnd);
    const qualifier = nounEnd > 0 && ws[nounEnd] !== 'and' ? ws.slice(nounEnd, andAt > 0 ? andAt : undefined) : [];
    return {
      attr: `${scope}count:${stem(last)}:${qualifier.join(' ')}`,
      value: { kind: 'number', n, unit: '' },
    };
  }
  if (head !== '' && present && TEMPORAL_PREPOSITIONS.has(w(0))) {
    // Something scheduled happens at one time: "the flight leaves at 9:30".
    const value = parseValue(comp);
    if (isTemporal(value)) return { attr: `${head}:${verb}@${value.kind}`, value };
  }
  return undefined;
}

export function comparePreferences(a: Preference, b: Preference): Comparison {
  if (a.qualifier !== b.qualifier) return 'incomparable';
  if (a.among.length > 0 || b.among.length > 0) {
    if (a.among.length > 0 && b.among.length > 0 && a.among.join('|') !== b.among.join('|')) return 'incomparable';
    const alternatives = new Set([...a.among, ...b.among]);
    if (!alternatives.has(a.value) || !alternatives.has(b.value)) return 'incomparable';
    return a.value === b.value ? 'same' : 'different';
  }
  if (a.value === b.value) return 'same';
  return a.category !== '' && a.category === b.category ? 'different' : 'incomparable';
}
